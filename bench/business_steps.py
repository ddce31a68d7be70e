#!/usr/bin/env python
"""Business memory's write and read paths, one at a time, for before/after work on them.

Seeds the benchmark's probe account (1,000 entries) and a writer account into a throwaway
embedded PostgreSQL with the local hashing provider, then times in process: ``entry_store``
of new keys and of existing keys (``update``: an overwrite; then each merging strategy),
``entry_recall`` in turn with its floor, ``entries_list`` of 20, ``entries_search`` over
the probe's 1,000, and ``note_save`` on fresh domains. Faster to rerun than
``scripts/bench`` (no 100k seeding) and the figures in docs/reliability.md's business
memory steps come from it; ``scripts/bench-against REV`` runs it for an earlier commit
and this one in turn.

``--confidence 90`` stores entries that go into the knowledge index (promotion after each
commit: a task with ``CELERY_BROKER_URL`` set, inline without); the default 60 stays out,
as ``scripts/bench``'s stores do. ``--profile NAME`` prints cProfile's view of one of them
instead (``--sort tottime``: by the time spent in each function, not under it); ``--plans``
lists the prepared statements PostgreSQL planned anew on more than five calls (a statement
that should keep a generic plan and does not).

Run: ``.venv/bin/python bench/business_steps.py [--iterations 300] [--profile store]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import business_bench as bb  # noqa: E402
from bench import environment  # noqa: E402
from bench import memory_bench as mb  # noqa: E402

PATHS = ("store", "update", "append", "increment", "max", "min", "recall", "list", "search", "save")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--profile", choices=PATHS, help="cProfile one path instead")
    parser.add_argument(
        "--sort", choices=("cumulative", "tottime"), default="cumulative", help="of --profile"
    )
    parser.add_argument("--plans", action="store_true", help="list statements planned anew")
    parser.add_argument("--confidence", type=int, default=60, help="of the stored entries")
    args = parser.parse_args()
    args.provider = "hashing"
    environment.setup(args)

    from prospect_memory.business.selectors.listing import entries_list
    from prospect_memory.business.selectors.recall import entry_recall
    from prospect_memory.business.selectors.search import entries_search
    from prospect_memory.business.services.store import entry_store
    from prospect_memory.notes.services.notes import note_save

    rng = random.Random(7)
    probe, writer = mb.business_actors()
    keys = bb.seed_probe(probe, rng)
    probes = mb.seed_probes(rng)
    made = {"stores": 0, "saves": 0}
    trust = args.confidence

    def store(i):
        made["stores"] += 1
        n = made["stores"]
        value = bb.value_for(rng, n)
        written = entry_store(
            actor=writer, key=f"learned:{n}", value=value, category="insight", confidence=trust
        )
        assert written.created

    def update(i):  # the first 15 keys stored, again
        key = f"learned:{i % 15 + 1}"
        value = bb.value_for(rng, i)
        written = entry_store(
            actor=writer, key=key, value=value, category="insight", confidence=trust
        )
        assert not written.created

    def merging(strategy: str, first, value):
        """A write merged by ``strategy`` into one of 15 keys of its own (as scripts/bench
        times them)."""
        for n in range(15):
            entry_store(actor=writer, key=f"{strategy}:{n}", value=first, confidence=trust)

        def write(i):
            written = entry_store(
                actor=writer,
                key=f"{strategy}:{i % 15}",
                value=value(i),
                strategy=strategy,
                category="insight",
                confidence=trust,
            )
            assert not written.created

        return write

    def recall(i):
        assert entry_recall(actor=probe, key=keys[i % len(keys)]).found

    def floor(i):
        bb.floor_recall(probe, keys[i % len(keys)])

    def listing(i):
        assert len(entries_list(actor=probe, limit=20).entries) == 20

    def search(i):
        assert entries_search(actor=probe, query=bb.QUERIES[i % len(bb.QUERIES)], limit=20).results

    def save(i):
        made["saves"] += 1
        actor, domain = probes[i % len(probes)]
        note_save(
            actor=actor,
            domain=f"new{made['saves']}-{domain}",
            title="Hiring",
            body=mb.body_for(rng, domain),
            source_urls=[f"https://{domain}/jobs/{made['saves']}"],
            observed_at=datetime.now(UTC).date().isoformat(),
        )

    paths = {
        "store": store,
        "update": update,
        "append": merging("append", [], lambda i: i),
        "increment": merging("increment", 0, lambda i: 1),
        "max": merging("max", 0, lambda i: i),
        "min": merging("min", 0, lambda i: -i),
        "recall": recall,
        "list": listing,
        "search": search,
        "save": save,
    }
    for fn in (*paths.values(), floor):
        mb.measure(fn, 20)  # warm caches, connections and prepared statements
    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(mb.measure, paths[args.profile], args.iterations)
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)
        return
    rec, flo = mb.measure_together((recall, floor), args.iterations)
    times = {"recall": rec, "floor": flo}
    for name in ("list", "search", "store", "update", "append", "increment", "max", "min", "save"):
        times[name] = mb.measure(paths[name], args.iterations)
    print(
        " | ".join(
            f"{name} p50 {statistics.median(t):.2f} p99 {mb.percentile(t, 99):.2f} ms"
            for name, t in times.items()
        )
    )
    if args.plans:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT custom_plans, generic_plans, left(regexp_replace(statement, "
                "'\\s+', ' ', 'g'), 120) FROM pg_prepared_statements WHERE custom_plans > 5 "
                "ORDER BY custom_plans DESC"
            )
            for custom, generic, statement in cursor.fetchall():
                print(f"planned anew {custom} times (generic {generic}): {statement}")


if __name__ == "__main__":
    main()
