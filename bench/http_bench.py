#!/usr/bin/env python
"""Recall and save over the full HTTP stack: REST and MCP against gunicorn on loopback.

For each size (1k, 100k, 1M stored notes, seeded like bench/memory_bench.py) it measures,
one request at a time, the p50/p99 of: REST recall, MCP recall, REST save, MCP save, a REST
business store of a new key, beside the in-process recall (the service call, no HTTP) and
the raw-SQL floor, with the ratios.
Then throughput: wrk runs of concurrent clients recalling a full dossier for a fixed time,
the median of several runs with their range, and the server's CPU time per recall (gunicorn
workers and PostgreSQL, from /proc), which varies less than the rate on a shared machine.

Run: ``scripts/bench-http`` (all sizes) or ``scripts/bench-http --sizes 1000 --seconds 5``;
``--checkout ../kit-before`` serves another version of Kit (the data seeded by this one).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import environment  # noqa: E402
from bench import memory_bench as mb  # noqa: E402
from bench.processes import cpu_seconds, postmaster  # noqa: E402

p = mb.percentile
timed = mb.measure


def mcp_body(tool, arguments):
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
    )


async def throughput(url, headers, domains, clients, seconds):
    import httpx2

    latencies, errors = [], 0
    deadline = time.monotonic() + seconds

    async def worker(k):
        nonlocal errors
        async with httpx2.AsyncClient(timeout=30, headers=headers) as http:
            i = k
            while time.monotonic() < deadline:
                domain = domains[i % len(domains)]
                i += clients
                start = time.perf_counter()
                response = await http.get(f"{url}/api/v1/recall", params={"domain": domain})
                latencies.append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    errors += 1

    started = time.monotonic()
    await asyncio.gather(*(worker(k) for k in range(clients)))
    return latencies, errors, time.monotonic() - started


def wrk_throughput(url, token, domain, clients, seconds):
    """Throughput with wrk (a C load generator), so the client costs little of the 2 cores."""
    import re
    import shutil
    import subprocess
    from urllib.parse import quote

    if not shutil.which("wrk"):
        return None
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{clients}",
            f"-d{int(seconds)}s",
            "--latency",
            "-H",
            f"Authorization: Bearer {token}",
            f"{url}/api/v1/recall?domain={quote(domain)}",
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    ).stdout

    def ms(label):
        match = re.search(rf"^\s+{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": ms("50%"),
        "p99": ms("99%"),
        "errors": int(errors.group(1)) if errors else 0,
    }


def throughput_runs(server, token, domain, clients, seconds, runs):
    """``runs`` wrk runs after a warm-up: the median run, the range, and CPU per recall."""
    if wrk_throughput(server.url, token, domain, clients, min(5, seconds)) is None:  # warm-up
        return None
    results = []
    database = postmaster()
    for _ in range(runs):
        before = cpu_seconds(server.process.pid, database)
        result = wrk_throughput(server.url, token, domain, clients, seconds)
        after = cpu_seconds(server.process.pid, database)
        served = result["rps"] * seconds
        result["log"] = str(server.log)
        for part in ("web", "db"):
            result[f"cpu_{part}_ms"] = (after[part] - before[part]) * 1000 / served
        results.append(result)
    results.sort(key=lambda r: r["rps"])
    median = dict(results[len(results) // 2])
    median["rps_min"], median["rps_max"] = results[0]["rps"], results[-1]["rps"]
    median["p99_max"] = max(r["p99"] for r in results)
    median["errors"] = sum(r["errors"] for r in results)
    return median


#: The servers compared on the same load: gunicorn's sync and threaded workers, and an
#: ASGI server (uvicorn, with its C parser and event loop) as a gunicorn worker.
SERVERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "sync": ("kit.wsgi", ("--worker-class", "sync")),
    "gthread": ("kit.wsgi", ("--worker-class", "gthread")),
    "uvicorn": ("kit.asgi", ("--worker-class", "uvicorn.workers.UvicornWorker")),
}


def start_server(
    kind: str,
    url: str,
    *,
    workers: int,
    threads: int,
    env: dict,
    port: int | None = None,
    checkout: Path = ROOT,
):
    """A server of ``kind`` on ``port`` running the Kit in ``checkout`` (the tokens name the
    address they were issued for: a server of another kind takes the place of the last on
    the same port)."""
    from tests.live import LiveServer

    app, args = SERVERS[kind]
    if kind == "gthread":
        args += ("--threads", str(threads))
    if app == "kit.asgi":
        # Under ASGI each request runs in a thread of its own, whose connection a persistent
        # setting would leave open: Django's advice there is CONN_MAX_AGE = 0.
        env = {**env, "CONN_MAX_AGE": "0"}
    return LiveServer(
        url, workers=workers, extra_env=env, gunicorn_args=args, app=app, port=port,
        checkout=checkout.resolve(),
    )  # fmt: skip


def rounded(value: Any) -> Any:
    """``value`` with every float to 2 decimals, for the JSON line of each size."""
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def python_throughput(url, token, domain, clients, seconds):
    """Throughput with a Python client where wrk is missing (it costs more of the CPU)."""
    latencies, errors, elapsed = asyncio.run(
        throughput(url, {"Authorization": f"Bearer {token}"}, [domain], clients, seconds)
    )
    rps = len(latencies) / elapsed
    return {
        "rps": rps,
        "rps_min": rps,
        "rps_max": rps,
        "p50": statistics.median(latencies),
        "p99": p(latencies, 99),
        "p99_max": p(latencies, 99),
        "errors": errors,
        "cpu_web_ms": float("nan"),
        "cpu_db_ms": float("nan"),
    }


BASELINE_DB = "kit_bench_baseline"


def start_baseline(probes, workers: int, env: dict):
    """A second server on a copy of the smallest database, kept for the whole run.

    Recalls against it are timed call by call with those against the current size, so
    "p50 at 1M / p50 at 1k" compares two figures taken in the same minutes: the machine's
    speed drifts more between sizes, minutes apart, than the table size moves recall.
    """
    import psycopg
    from django.conf import settings
    from django.db import connection

    from kit.db import database_url
    from tests.live import LiveServer, free_port

    port = free_port()
    tokens = mb.probe_tokens(
        probes, base_url=f"http://127.0.0.1:{port}", client_name="Bench baseline"
    )
    db = settings.DATABASES["default"]
    connection.close()  # a template database must have no other sessions
    with psycopg.connect(
        host=db["HOST"], port=db.get("PORT") or 5432, user=db["USER"], dbname="postgres",
        autocommit=True,
    ) as admin:  # fmt: skip
        admin.execute(f'DROP DATABASE IF EXISTS "{BASELINE_DB}"')
        admin.execute(f'CREATE DATABASE "{BASELINE_DB}" TEMPLATE "{db["NAME"]}"')
    server = LiveServer(database_url(db, BASELINE_DB), workers=workers, extra_env=env, port=port)
    return server, tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads per gthread worker")
    parser.add_argument(
        "--servers",
        default=",".join(SERVERS),
        help="servers to compare under load (the first also serves the timed calls)",
    )
    parser.add_argument("--clients", default="1,8,32", help="concurrent clients, comma-separated")
    parser.add_argument("--seconds", type=float, default=10, help="length of one wrk run")
    parser.add_argument("--runs", type=int, default=3, help="wrk runs per size (median kept)")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the Kit the servers run")
    environment.add_provider_argument(parser)
    args = parser.parse_args()
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(","))
    kinds = [kind.strip() for kind in args.servers.split(",")]
    unknown = sorted(set(kinds) - set(SERVERS))
    if unknown:
        parser.error(f"unknown server(s) {', '.join(unknown)}; choose from {', '.join(SERVERS)}")
    client_counts = [int(c) for c in args.clients.split(",")]
    environment.setup(args)

    import random

    import httpx2
    from django.conf import settings

    from bench.business_bench import value_for
    from kit.db import database_url
    from prospect_memory.notes.payloads import recall_data
    from prospect_memory.notes.selectors import dossier_recall

    rng = random.Random(7)
    probes = mb.seed_probes(rng)
    url = database_url(settings.DATABASES["default"])
    rows = []
    from prospect_memory.notes.models import DailySaveCount

    env = {"KIT_WRITES_PER_MINUTE_PER_CLIENT": "0", "LOG_LEVEL": "WARNING"}
    baseline = baseline_tokens = None
    for size in sizes:
        mb.seed_fillers(rng, size)
        # The server keeps the real 200-a-day quota; the harness gives the probes a new day.
        DailySaveCount.objects.all().delete()
        if baseline is None and len(sizes) > 1:
            baseline, baseline_tokens = start_baseline(probes, args.workers, env)
        server = start_server(
            kinds[0], url, workers=args.workers, threads=args.threads, env=env,
            checkout=args.checkout,
        )  # fmt: skip
        try:
            tokens = mb.probe_tokens(probes, base_url=server.url, client_name="Bench", write=True)
            http = httpx2.Client(timeout=30)
            saves = iter(range(10**9))

            def rest_recall_on(base_url, bearer_tokens):
                def recall(i):
                    k = i % len(probes)
                    r = http.get(
                        f"{base_url}/api/v1/recall",
                        params={"domain": probes[k][1]},
                        headers={"Authorization": f"Bearer {bearer_tokens[k]}"},
                    )
                    ok = r.status_code == 200 and r.json()["data"]["note_count"] == 50
                    assert ok, r.text[:200]

                return recall

            rest_recall = rest_recall_on(server.url, tokens)
            baseline_recall = rest_recall_on(baseline.url, baseline_tokens) if baseline else None

            def mcp_recall(i):
                k = i % len(probes)
                r = http.post(
                    f"{server.url}/mcp",
                    content=mcp_body("outreach_recall_prospect_context", {"domain": probes[k][1]}),
                    headers={
                        "Authorization": f"Bearer {tokens[k]}",
                        "Content-Type": "application/json",
                    },
                )
                assert r.status_code == 200 and not r.json()["result"]["isError"], r.text[:200]

            def save_args(k):
                n = next(saves)
                domain = probes[k][1]
                return {
                    "domain": f"h{n}-{domain}",
                    "title": "Hiring",
                    "body": mb.body_for(rng, domain),
                    "source_urls": [f"https://{domain}/jobs/h{n}"],
                    "observed_at": "2026-11-29",
                }

            def rest_save(i):
                k = i % len(probes)
                r = http.post(
                    f"{server.url}/api/v1/notes",
                    json=save_args(k),
                    headers={"Authorization": f"Bearer {tokens[k]}"},
                )
                assert r.status_code == 201, r.text[:200]

            def mcp_save(i):
                k = i % len(probes)
                r = http.post(
                    f"{server.url}/mcp",
                    content=mcp_body("outreach_save_prospect_research", save_args(k)),
                    headers={
                        "Authorization": f"Bearer {tokens[k]}",
                        "Content-Type": "application/json",
                    },
                )
                assert r.status_code == 200 and not r.json()["result"]["isError"], r.text[:200]

            def rest_store(i):
                # A business store of a new key: with a provider that takes time and no
                # broker, it answers before its vector (the worker embeds it afterwards).
                k = i % len(probes)
                r = http.post(
                    f"{server.url}/api/v1/business-memory/entries",
                    json={"key": f"bench:s{next(saves)}", "value": value_for(rng, i)},
                    headers={"Authorization": f"Bearer {tokens[k]}"},
                )
                assert r.status_code == 201, r.text[:200]

            def in_process(i):
                actor, domain = probes[i % len(probes)]
                recall_data(dossier_recall(actor=actor, domain=domain))

            def floor(i):
                actor, domain = probes[i % len(probes)]
                mb.floor_recall(actor, domain)

            variants = {
                "rest_recall": rest_recall,
                "mcp_recall": mcp_recall,
                "in_process": in_process,
                "floor": floor,
            }
            for fn in variants.values():
                timed(fn, 20)  # warm-up
            n = args.iterations
            # Recalls call by call in turn, so their ratios see the same machine.
            recalls = mb.measure_together(tuple(variants.values()), n)
            if baseline is not None:
                # This size and the smallest, alternating and nothing else in between.
                timed(baseline_recall, 20)
                here, smallest = mb.measure_together((rest_recall, baseline_recall), n)
                variants.update(scale_here=None, scale_smallest=None)
                recalls += [here, smallest]
            measured = {
                **dict(zip(variants, recalls, strict=True)),
                "rest_save": timed(rest_save, n),
                "mcp_save": timed(mcp_save, n),
                "rest_store": timed(rest_store, n),
            }
            loads = []
            for kind in kinds:
                # One server at a time: the first is already up, the others start in turn.
                if kind != kinds[0]:
                    server.stop()
                    server = start_server(
                        kind,
                        url,
                        workers=args.workers,
                        threads=args.threads,
                        env=env,
                        port=server.port,
                        checkout=args.checkout,
                    )
                for clients in client_counts:
                    loaded = throughput_runs(
                        server, tokens[0], probes[0][1], clients, args.seconds, args.runs
                    )
                    if loaded is None:  # no wrk: a Python client, which costs more CPU
                        print("wrk not found (apt-get install wrk): one run with a Python "
                              "client, no server CPU figures", file=sys.stderr)  # fmt: skip
                        loaded = python_throughput(
                            server.url, tokens[0], probes[0][1], clients, args.seconds
                        )
                    loads.append({"server": kind, "clients": clients, **loaded})
        finally:
            server.stop()
            if baseline is not None and size == sizes[-1]:
                baseline.stop()
        from prospect_memory.notes.models import Note

        row: dict[str, Any] = {"size": Note.objects.count()}
        for name, samples in measured.items():
            row[f"{name}_p50"] = statistics.median(samples)
            row[f"{name}_p99"] = p(samples, 99)
        row["loads"] = loads
        rows.append(row)
        print(json.dumps(rounded(row)), flush=True)

    print()
    print(
        "| stored notes | REST recall p50 / p99 | MCP recall p50 / p99 | in-process p50 | floor p50 | in-process / floor | REST / in-process | REST save p50 / p99 | MCP save p50 / p99 | REST store p50 / p99 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['size']:,} | {r['rest_recall_p50']:.1f} / {r['rest_recall_p99']:.1f} ms | "
            f"{r['mcp_recall_p50']:.1f} / {r['mcp_recall_p99']:.1f} ms | {r['in_process_p50']:.1f} ms | "
            f"{r['floor_p50']:.1f} ms | {r['in_process_p50'] / r['floor_p50']:.2f}x | "
            f"{r['rest_recall_p50'] / r['in_process_p50']:.2f}x | {r['rest_save_p50']:.1f} / {r['rest_save_p99']:.1f} ms | "
            f"{r['mcp_save_p50']:.1f} / {r['mcp_save_p99']:.1f} ms | "
            f"{r['rest_store_p50']:.1f} / {r['rest_store_p99']:.1f} ms |"
        )
    print()
    print(
        f"| stored notes | server | clients | recalls/s (median of {args.runs} x "
        f"{args.seconds:g} s) | range | p50 | p99 (worst run) | server CPU per recall "
        "(web + database) | errors |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        for load in r["loads"]:
            print(
                f"| {r['size']:,} | {load['server']} | {load['clients']} | {load['rps']:.0f} | "
                f"{load['rps_min']:.0f}-{load['rps_max']:.0f} | {load['p50']:.1f} ms | "
                f"{load['p99']:.1f} ({load['p99_max']:.1f}) ms | "
                f"{load['cpu_web_ms']:.2f} + {load['cpu_db_ms']:.2f} ms | {load['errors']} |"
            )
    # The server Kit ships must answer every recall: refusals are no figure of recalls (the
    # others' are shown, and said in the table).
    failed = [
        (r["size"], load)
        for r in rows
        for load in r["loads"]
        if load["server"] == kinds[0] and load["errors"]
    ]
    for size, load in failed:
        print(
            f"\n{load['errors']} recalls to {load['server']} ({load['clients']} clients, "
            f"{size:,} notes) were not answered 200: see {load.get('log', 'the log')}",
            file=sys.stderr,
        )
    if len(rows) > 1:
        print(
            f"\nREST recall p50 at {rows[-1]['size']:,} / at {rows[0]['size']:,}: "
            f"{rows[-1]['rest_recall_p50'] / rows[0]['rest_recall_p50']:.2f} (minutes apart); "
            "timed alongside a server on a copy of the smallest database:"
        )
        print(
            "\n| stored notes | REST recall p50 | the smallest size's p50, same minutes | ratio |"
        )
        print("|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['size']:,} | {r['scale_here_p50']:.2f} ms | "
                f"{r['scale_smallest_p50']:.2f} ms | "
                f"{r['scale_here_p50'] / r['scale_smallest_p50']:.2f} |"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
