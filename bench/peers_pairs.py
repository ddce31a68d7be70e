#!/usr/bin/env python
"""Each Kit run of a side-by-side (``scripts/bench-peers``) beside the peer run of its round.

The shared harness's ``summarize.py`` pairs the first runs only; this reads every round of
a results folder: ``lgs_rN.json`` (LangGraph's ``PostgresStore``) and ``kit_rN*.log`` (Kit's
``scripts/bench``: ``kit_rN`` without a broker, ``kit_rN-broker`` with one), and prints
peer p50 / Kit p50 for each operation at both scales (search: Kit / peer, as issue 22
asks it). Standard library only: it runs with either virtualenv.

Run: ``python bench/peers_pairs.py artifacts/peers/<time>``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

SCALES = ("~1k", "~100k")
_RUN = re.compile(
    r"^business memory \((?P<label>[^)]+)\): (?P<entries>[\d,]+) entries.*?\| store p50 "
    r"(?P<store>[\d.]+) ms \| recall p50 (?P<recall>[\d.]+) ms .*?\| list p50 (?P<list>[\d.]+) "
    r"ms \| search p50 (?P<search>[\d.]+) ms$",
    re.M,
)
_UPDATES = re.compile(r"^business memory \([^)]+\) updates of an existing key, p50: (.*)$", re.M)


def kit_run(log: Path) -> list[dict]:
    """The business memory rows of one Kit log, smallest scale first."""
    text = log.read_text()
    rows = [
        {k: float(v) for k, v in m.groupdict().items() if k not in ("label", "entries")}
        for m in _RUN.finditer(text)
    ]
    for row, m in zip(rows, _UPDATES.finditer(text), strict=False):
        row["updates"] = {
            name: float(ms) for name, ms in re.findall(r"(\w+) ([\d.]+) ms", m.group(1))
        }
    return rows


def table(folder: Path) -> list[str]:
    peers = {
        p.stem.removeprefix("lgs_"): json.loads(p.read_text()) for p in folder.glob("lgs_*.json")
    }
    logs = sorted(folder.glob("kit_*.log"), key=lambda p: p.stem.split("-"))  # r1, r1-broker
    kits = {p.stem.removeprefix("kit_"): kit_run(p) for p in logs}
    runs = [
        (tag, rows, peers[tag.split("-")[0]])
        for tag, rows in kits.items()
        if rows and tag.split("-")[0] in peers
    ]
    if not runs:
        return [f"no Kit run beside a peer run in {folder}"]
    out = [
        "peer p50 / Kit p50 (above 1: Kit faster); search: Kit / peer (below 1: Kit faster)",
        "",
        "| items | operation | " + " | ".join(tag for tag, _, _ in runs) + " |",
        "|---|---|" + "---:|" * len(runs),
    ]
    for idx, scale in enumerate(SCALES):
        cells: dict[str, list[str]] = {}
        for _, rows, peer in runs:
            if idx >= len(rows) or idx >= len(peer["scales"]):
                continue
            kit, theirs = rows[idx], peer["scales"][idx]
            put = theirs["put"]["p50"]
            cells.setdefault("store, new key (peer `put` p50 ms)", []).append(
                f"{put / kit['store']:.2f}x ({put:.2f})"
            )
            updates = [put / ms for ms in kit.get("updates", {}).values()]
            if updates:
                cells.setdefault("update: overwrite, append, increment, max, min", []).append(
                    f"{min(updates):.2f}-{max(updates):.2f}x"
                )
            cells.setdefault("recall by key", []).append(
                f"{theirs['get']['p50'] / kit['recall']:.2f}x"
            )
            cells.setdefault("list of 20", []).append(f"{theirs['list']['p50'] / kit['list']:.2f}x")
            # At ~100k the peer's HNSW index, filtered after the search, returns 0-2 of 10:
            # no time to compare with an exact search.
            for limit in (10, 20) if idx == 0 else ():
                cells.setdefault(f"search of 1,000, Kit / peer limit {limit}", []).append(
                    f"{kit['search'] / theirs[f'search{limit}']['p50']:.2f}x"
                )
        for i, (name, values) in enumerate(cells.items()):
            out.append(f"| {scale if i == 0 else ''} | {name} | " + " | ".join(values) + " |")
    return out


if __name__ == "__main__":
    print("\n".join(table(Path(sys.argv[1]))))
