#!/usr/bin/env python
"""Recall's overlap pairs of two versions of the code, called in turn in one process.

Loads ``prospect_memory/notes/pairs.py`` of ``--against`` (a ``git worktree`` of the
commit to compare with) beside this checkout's, seeds the benchmark's ten full 50-note
dossiers (``bench/memory_bench.py``) and ``--fillers`` more notes into a throwaway embedded
PostgreSQL, checks that both versions answer the same pairs, then times, call by call in
rotation with the floor (the same recall as raw SQL and decryption): recall of a company
recalled again unchanged, and the first recall after a change (the newest note forgotten
by the process, its pairs computed against the others), with each version's module. The
rest of the recall is this checkout's, so the ratios differ only by the pairs' code: on a
machine whose speed moves between runs of one version more than a change does, this is
what tells the change.

Run: ``.venv/bin/python bench/pairs_ab.py --against ../kit-before`` (about 3 minutes).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402
from bench import memory_bench as mb  # noqa: E402


def load_pairs_module(checkout: Path):
    """``prospect_memory/notes/pairs.py`` of ``checkout`` as a module of its own (its own
    kept pairs), beside this checkout's."""
    spec = importlib.util.spec_from_file_location(
        "pairs_against", checkout / "prospect_memory" / "notes" / "pairs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=300, help="turns per round")
    parser.add_argument("--fillers", type=int, default=1000, help="more stored notes")
    environment.add_provider_argument(parser)
    args = parser.parse_args()
    environment.setup(args)

    import prospect_memory.notes.selectors as selectors
    from prospect_memory.notes import pairs as this
    from prospect_memory.notes.payloads import recall_data

    other = load_pairs_module(args.against.resolve())
    if not hasattr(other.Key, "_fields"):  # older than 505e32e: a plain tuple, read by name
        made = other.company_key
        other.company_key = lambda account_id, domain: this.Key(*made(account_id, domain))
    rng = random.Random(7)
    probes = mb.seed_probes(rng)
    mb.seed_fillers(rng, args.fillers)
    newest = {
        domain: selectors.dossier_recall(actor=actor, domain=domain).note_payloads[0]["id"]
        for actor, domain in probes
    }

    def recall_with(module, *, after_a_change: bool):
        def call(i: int) -> dict:
            actor, domain = probes[i % len(probes)]
            selectors.pairs = module  # the recall reads its pairs through this name
            try:
                if after_a_change:
                    key = module.company_key(actor.account.pk, domain)
                    module.forget_note(key, newest[domain])
                return recall_data(selectors.dossier_recall(actor=actor, domain=domain))
            finally:
                selectors.pairs = this

        return call

    def floor(i: int) -> None:
        actor, domain = probes[i % len(probes)]
        mb.floor_recall(actor, domain)

    calls = {
        (version, change): recall_with(module, after_a_change=change)
        for version, module in (("against", other), ("this", this))
        for change in (False, True)
    }
    for i in range(len(probes) * 2):  # both answer the same pairs, in the same order
        for change in (False, True):
            answers = [calls[(v, change)](i)["overlap_pairs"] for v in ("against", "this")]
            if answers[0] != answers[1]:
                raise SystemExit(f"the two versions answer different pairs for probe {i}")
    timed = [*calls.values(), floor]
    for fn in timed:
        mb.measure(fn, 20)
    print(f"recall / floor, {args.against} against {ROOT}, {args.iterations} turns a round")
    print("| round | floor p50 | unchanged: against / this | after a change: against / this |")
    print("|---:|---:|---:|---:|")
    for r in range(1, args.rounds + 1):
        samples = mb.measure_together(timed, args.iterations)
        p50 = [statistics.median(s) for s in samples]
        ratio = [p / p50[-1] for p in p50[:-1]]
        print(f"| {r} | {p50[-1]:.3f} ms | {ratio[0]:.2f}x / {ratio[2]:.2f}x | "
              f"{ratio[1]:.2f}x / {ratio[3]:.2f}x |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
