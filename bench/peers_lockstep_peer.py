#!/usr/bin/env python
"""The peer's side of ``bench/peers_lockstep.py``: LangGraph's ``PostgresStore`` as the
shared harness sets it up (``lgs_bench.py``: its configuration, its values, its probe and
fillers, its embedding), answering one timed call at a time.

Runs with the harness's own virtualenv (LangGraph is not one of Kit's packages), the
harness's folder as its first argument and the harness's value family as its second
(``demo``, its main workload of 300-800-byte values, the default; or ``kit``, the
~200-byte values of Kit's own bench). It starts a throwaway cluster with the harness's
``pg_cluster.py`` under ``$PEER_PG_ROOT``, seeds the probe namespace through ``put``, then
reads commands on stdin, one per line, and writes one line of JSON for each:

- ``get I`` | ``list I`` | ``search10 I`` | ``search20 I`` | ``put I``: the call, timed here
  (``{"ms": ...}``), so the driver's pipe is outside the figure; a ``get`` that finds
  nothing or a list short of 20 is an error, as the harness asserts;
- ``seed N``: the harness's ``seed_fillers`` until the store holds N items;
- ``quality``: the harness's completeness check of search against exact cosine;
- ``quit``: closes the store and stops the cluster (stopped too if the driver goes away;
  the driver deletes its folder).

Nothing is timed while the driver times Kit: this process waits on its pipe meanwhile.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    # Answers go to the driver on a copy of stdout; whatever the cluster's tools print goes
    # to stderr, so nothing else ever lands on the driver's pipe.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    harness = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(harness))
    import kit_hash_embed
    import lgs_bench  # the harness's workload and seeding, unchanged
    import pg_cluster
    import values

    family = sys.argv[2] if len(sys.argv) > 2 else "demo"
    info = pg_cluster.start()
    try:
        serve(info, family, answers, lgs_bench, kit_hash_embed, values)
    finally:
        pg_cluster.stop()  # also when the driver goes away: no server left running


def serve(info, family, answers, lgs_bench, kit_hash_embed, values):
    """Seed the probe namespace as the harness does, then answer commands until ``quit``."""
    import psycopg
    from langgraph.store.postgres import PostgresStore

    QUERIES, make = values.QUERIES, values.make

    pg = psycopg.connect(info["dsn"], autocommit=True)
    index = {"dims": kit_hash_embed.DIMS, "embed": kit_hash_embed.TimedEmbed(), "fields": ["$"]}
    with PostgresStore.from_conn_string(info["dsn"], index=index) as store:
        store.setup()
        rng = random.Random(7)
        keys = []
        for i in range(lgs_bench.PROBE_ENTRIES):
            word, value = make(family, rng, i, "fact")
            keys.append(f"{word}:{i:04d}")
            store.put(lgs_bench.PROBE_NS, keys[-1], value)
        pg.execute("ANALYZE store")
        pg.execute("ANALYZE store_vectors")
        srng = random.Random(11)
        puts = {"n": 0}
        counts = []  # results of each search, checked after the timed call

        def get(i):
            return store.get(lgs_bench.PROBE_NS, keys[i % len(keys)]) is not None

        def listing(i):
            found = store.search(lgs_bench.PROBE_NS, filter={"category": "fact"}, limit=20)
            return len(found) == 20

        def search(limit):
            def call(i):
                counts.append(
                    len(store.search(lgs_bench.PROBE_NS, query=QUERIES[i % 5], limit=limit))
                )
                return True

            return call

        def put(i):
            puts["n"] += 1
            _, value = make(family, srng, puts["n"], "insight")
            store.put(lgs_bench.WRITER_NS, f"lockstep:learned:{puts['n']}", value)
            return True

        calls = {
            "get": get,
            "list": listing,
            "search10": search(10),
            "search20": search(20),
            "put": put,
        }
        print(
            json.dumps({"ready": info["server_version"], "family": family}),
            file=answers,
            flush=True,
        )
        for line in sys.stdin:
            op, _, arg = line.strip().partition(" ")
            if op == "quit":
                break
            if op in calls:
                start = time.perf_counter()
                ok = calls[op](int(arg))
                answer = {"ms": (time.perf_counter() - start) * 1000}
                if not ok:  # as the harness asserts: an empty answer is not a fast one
                    answer = {"error": f"{op} {arg} found nothing"}
            elif op == "seed":
                seeded = lgs_bench.seed_fillers(pg, store, family, int(arg))
                answer = {
                    "items": pg.execute("SELECT count(*) FROM store").fetchone()[0],
                    "seconds": seeded.get("seconds", 0),
                }
            elif op == "quality":
                recalls = []
                for q in QUERIES:
                    got = [item.key for item in store.search(lgs_bench.PROBE_NS, query=q, limit=10)]
                    recalls.append(len(set(got) & set(lgs_bench.exact_topk(pg, q, 10))) / 10)
                answer = {
                    "recall_at_10": statistics.fmean(recalls),
                    "search_returned_min": min(counts, default=0),
                }
                counts.clear()
            else:
                answer = {"error": f"unknown command {op!r}"}
            print(json.dumps(answer), file=answers, flush=True)
    pg.close()


if __name__ == "__main__":
    main()
