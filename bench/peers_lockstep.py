#!/usr/bin/env python
"""Business memory and LangGraph's ``PostgresStore`` in lockstep: call by call, in turn.

The shared harness (``../shared/peers/langgraph-store``) runs the peer and Kit minutes
apart, and this machine's speed moves by more than the gaps being measured between two
runs minutes apart. Here both are set up as that harness sets them up (the peer by
``bench/peers_lockstep_peer.py`` with the harness's own code, values and embedding, in the
harness's virtualenv; Kit with ``bench/business_bench.py``'s probe, fillers and calls), each
on its own throwaway cluster, and every timed call of one is followed by the other's, the
order alternating, so drift, a neighbour's burst or a checkpoint falls on both. Each side
times its own call (the peer inside its process, so the pipe between them is outside both
figures); the side not being timed waits on the pipe, idle.

Pairs at each scale (the probe alone, then among ``--entries`` items of other accounts):
store of new keys and each update strategy against ``put`` of new keys; recall by key
against ``get``; the list of 20 against the filtered search; search of the probe's 1,000
against the peer's search of limit 10 and 20. Kit's side has no notes table to speak of
(the harness's Kit run also carries 100k notes, which no business call reads). The peer
stores the harness's main values (``--family demo``, 300-800 bytes, which its embedding
and search pay for) or Kit's own (``--family kit``, ~200 bytes, as Kit stores); the
harness's checks stand (a ``get`` finds its item, a list has 20, search results counted).

Run: ``scripts/bench-peers lockstep`` (sets up both virtualenvs), or by hand with
``--harness`` and ``--peer-python``. ``--table DIR`` prints the runs in DIR side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402

WARMUP = 20
BLOCKS = 3  # the pairs split in turn into this many blocks, to show how steady a ratio is


class Peer:
    """The peer's process: one command out, one JSON line back."""

    def __init__(self, harness: Path, python: str, scratch: Path, family: str):
        # The harness caches its fillers' vectors (LGS_CACHE): runs after the first skip
        # embedding 100k texts again.
        env = {"LGS_CACHE": str(scratch / "cache"), **os.environ,
               "PEER_PG_ROOT": str(scratch / "pg")}  # fmt: skip
        self.process = subprocess.Popen(
            [python, str(ROOT / "bench" / "peers_lockstep_peer.py"), str(harness), family],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.ready = self.ask("")["ready"]

    def ask(self, command: str) -> dict:
        if command:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer's process ended (exit {self.process.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer

    def timed(self, op: str):
        return lambda i: self.ask(f"{op} {i}")["ms"]

    def close(self) -> None:
        """Ask the peer to stop its cluster and end; a peer that already ended is fine."""
        try:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()  # its own ``finally`` has not run: its cluster may be left
            raise


def timed_here(fn):
    def call(i):
        start = time.perf_counter()
        fn(i)
        return (time.perf_counter() - start) * 1000

    return call


def in_turn(calls, iterations: int) -> list[list[float]]:
    """Each call once per turn, the order rotating (as ``measure_together``)."""
    samples: list[list[float]] = [[] for _ in calls]
    for i in range(iterations):
        for shift in range(len(calls)):
            k = (i + shift) % len(calls)
            samples[k].append(calls[k](i))
    return samples


def pair(kit, *peer, iterations: int) -> dict:
    """Kit's call and the peer's (one or more), in turn: the p50s, peer p50 / Kit p50 for
    each peer call (the table turns search's around), and that ratio in each block."""
    calls = [timed_here(kit), *peer]
    in_turn(calls, WARMUP)
    samples = in_turn(calls, iterations)
    kit_ms, peer_ms = samples[0], samples[1:]
    size = len(kit_ms) // BLOCKS
    blocks = [slice(b * size, (b + 1) * size) for b in range(BLOCKS)]
    return {
        "kit_p50": statistics.median(kit_ms),
        "peer_p50": [statistics.median(s) for s in peer_ms],
        "ratio": [statistics.median(s) / statistics.median(kit_ms) for s in peer_ms],
        "blocks": [
            [statistics.median(s[b]) / statistics.median(kit_ms[b]) for b in blocks]
            for s in peer_ms
        ],
    }


def run(args) -> dict:
    from bench import business_bench, memory_bench

    environment.setup(args)
    from django.conf import settings

    from outreach.models import Account

    scratch = Path(tempfile.mkdtemp(prefix="kit-lockstep-peer-"))
    peer = Peer(Path(args.harness), args.peer_python, scratch, args.family)
    rng = random.Random(7)
    probe, writer = memory_bench.business_actors()
    keys = business_bench.seed_probe(probe, rng)
    Account.objects.bulk_create(
        Account(slug=f"filler-{n}", name="Filler") for n in range(-(-args.entries // 1000) + 1)
    )
    result = {
        "tag": args.tag,
        "broker": bool(settings.CELERY_BROKER_URL),
        "peer_values": args.family,
        "peer_server": peer.ready,
        "iterations": args.iterations,
        "scales": [],
    }
    try:
        for label, target in (("alone", 0), ("at_scale", args.entries)):
            if target:
                peer.ask(f"seed {target}")
                business_bench.seed_fillers(target, rng)
            ops = business_bench.operations(label, probe, keys, writer)
            put = peer.timed("put")
            n = args.iterations
            # Reads first, then writes, as the harness orders them: the peer's planner
            # leaves its exact plan for the HNSW index once a few thousand items share the
            # table, so its search at ~1k is measured before the writer's items land.
            scale = {
                "label": label,
                "recall": pair(ops["recall"], peer.timed("get"), iterations=n),
                "list": pair(ops["list"], peer.timed("list"), iterations=n),
                "search": pair(
                    ops["search"], peer.timed("search10"), peer.timed("search20"), iterations=n
                ),
                **{f"peer_{k}": v for k, v in peer.ask("quality").items()},
                "store": pair(ops["store"], put, iterations=n),
                **{name: pair(fn, put, iterations=n) for name, fn in ops["updates"].items()},
            }
            result["scales"].append(scale)
            print(f"{args.tag} {label}: " + summary_line(scale), flush=True)
    finally:
        peer.close()
        shutil.rmtree(scratch / "pg", ignore_errors=True)
    return result


UPDATES = ("overwrite", "append", "increment", "max", "min")


def summary_line(scale: dict) -> str:
    def r(name, k=0):
        p = scale[name]
        return f"{name} {p['ratio'][k]:.2f}x ({p['peer_p50'][k]:.2f} / {p['kit_p50']:.2f} ms)"

    search = scale["search"]
    return " | ".join(
        [
            r("store"),
            *(r(u) for u in UPDATES),
            r("recall"),
            r("list"),
            f"search Kit / peer limit 10 {1 / search['ratio'][0]:.2f}x, limit 20 "
            f"{1 / search['ratio'][1]:.2f}x",
            f"peer recall@10 {scale['peer_recall_at_10']:.2f}",
            f"fewest results of a peer search {scale['peer_search_returned_min']}",
        ]
    )


def _round(tag: str) -> int:
    digits = "".join(c for c in tag.split("-")[0] if c.isdigit())
    return int(digits) if digits else 0


def table(folder: Path) -> list[str]:
    """The runs in ``folder`` (``lockstep_*.json``), one column each."""
    runs = sorted(
        (json.loads(p.read_text()) for p in folder.glob("lockstep_*.json")),
        # r1, r1-broker, r2, ... r10: by round number, then without a broker first
        key=lambda run: (_round(run["tag"]), run["tag"], run["broker"]),
    )
    if not runs:
        return [f"no lockstep runs in {folder}"]

    def span(values):
        return f"{min(values):.2f}-{max(values):.2f}x"

    def cell(run, scale, name, k=0, invert=False):
        p = next(s for s in run["scales"] if s["label"] == scale)[name]
        ratio, blocks = p["ratio"][k], p["blocks"][k]
        if invert:
            ratio, blocks = 1 / ratio, [1 / b for b in blocks]
        return f"{ratio:.2f}x ({span(blocks)})"

    lines = [
        "peer p50 / Kit p50 over the pairs of the run (above 1: Kit faster; search: Kit / "
        "peer, below 1: Kit faster); in brackets, the same ratio in each third of the pairs",
        "",
        "| items | operation | " + " | ".join(r["tag"] for r in runs) + " |",
        "|---|---|" + "---:|" * len(runs),
    ]
    for scale, items in (("alone", "~1k"), ("at_scale", "~100k")):
        rows = [
            ("store, new key (peer `put` of a new key)", "store", 0, False),
            *((f"update: {u} (peer `put` of a new key)", u, 0, False) for u in UPDATES),
            ("recall by key (counted) / `get`", "recall", 0, False),
            ("list of 20 / filtered search", "list", 0, False),
        ]
        if scale == "alone":
            rows += [
                ("search of 1,000, Kit / peer limit 10", "search", 0, True),
                ("search of 1,000, Kit / peer limit 20", "search", 1, True),
            ]
        for n, (title, name, k, invert) in enumerate(rows):
            cells = " | ".join(cell(r, scale, name, k, invert) for r in runs)
            lines.append(f"| {items if n == 0 else ''} | {title} | {cells} |")
    peer_put = [
        next(s for s in r["scales"] if s["label"] == scale)["store"]["peer_p50"][0]
        for scale in ("alone", "at_scale")
        for r in runs
    ]
    lines += [
        "",
        f"peer `put` p50 in the store pairs: {min(peer_put):.2f}-{max(peer_put):.2f} ms; "
        "peer values: " + ", ".join(sorted({r.get("peer_values", "demo") for r in runs})),
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--harness", help="the shared harness's folder (with its venv/)")
    parser.add_argument("--peer-python", help="the harness virtualenv's python")
    parser.add_argument("--entries", type=int, default=100_000, help="items at scale")
    parser.add_argument("--iterations", type=int, default=300, help="timed pairs per operation")
    parser.add_argument("--tag", default="run")
    parser.add_argument(
        "--family",
        choices=("demo", "kit"),
        default="demo",
        help="the peer's values: demo (the harness's main workload, 300-800 bytes) or kit "
        "(the ~200-byte values of Kit's own bench, as Kit stores)",
    )
    parser.add_argument("--out", help="folder for lockstep_<tag>.json")
    # Kit's embeddings: the peer's own (hashing) by default, so both compare the same
    # vectors; the bundled model (semantic) shows what a default install gets.
    environment.add_provider_argument(parser, default="hashing")
    parser.add_argument("--table", help="print the runs of this folder side by side, and stop")
    args = parser.parse_args()
    if args.table:
        print("\n".join(table(Path(args.table))))
        return
    result = run(args)
    if args.out:
        Path(args.out, f"lockstep_{args.tag}.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
