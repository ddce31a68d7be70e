"""Fault runs on the local cluster (``scripts/cluster faults``, after ``scripts/cluster up``).

For each fault, ``scripts/load``'s agents (``bench/load.py``: over MCP, each recalls a
company, saves findings with unique markers and now and then compacts a dossier) work
through the cluster's one address for a fixed time while the fault happens and is mended.
Then the load's correctness checker reads the primary (every acknowledged save stored
exactly once, in its account; no dossier or day over its limit), and every active note of
the cluster must be embedded within 60 s. Reported per fault: requests, answers by status
(0: no answer at all), acknowledged saves and those lost, what else the checker found, and
the seconds from the fault's mending until the replica serves reads again
(``kit_database_reads_total{database="replica1"}`` rising on the web nodes' own ports).

Faults: the replica stopped, a web node killed (SIGKILL, master and workers), a Celery
worker's process killed in the middle of a task (a backfill re-embedding every note), a
whole Celery worker killed, the primary restarted.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import psutil
import psycopg

from bench.cluster import (
    ADDRESS,
    HOME,
    METRICS_TOKEN,
    NODES,
    ROOT,
    WORKERS,
    _environment,
    _pid,
)


def _replica_reads() -> float:
    total = 0.0
    for address in NODES.values():
        request = urllib.request.Request(
            f"http://{address}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310
                text = answer.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith('kit_database_reads_total{database="replica1"}'):
                total += float(line.split()[-1])
    return total


def _primary() -> psycopg.Connection[Any]:
    primary = json.loads((HOME / "state.json").read_text())["primary"]
    return psycopg.connect(
        dbname=primary["NAME"],
        user=primary["USER"],
        host=primary["HOST"],
        port=primary["PORT"],
        autocommit=True,
    )


def _checked(saved: list[str], wait: float = 60) -> tuple[int, int]:
    """How many of the acknowledged saves the primary does not hold, and how many active
    notes of the cluster still wait for their embedding after up to ``wait`` seconds."""
    with _primary() as conn:
        row = conn.execute(
            "SELECT count(*) FROM prospect_memory_note WHERE id = ANY(%s::uuid[])", [saved]
        ).fetchone()
        lost = len(saved) - int(row[0] if row else 0)
        deadline = time.monotonic() + wait
        while True:
            row = conn.execute(_WAITING).fetchone()
            waiting = int(row[0]) if row else 0
            if not waiting or time.monotonic() > deadline:
                return lost, waiting
            time.sleep(1)


_WAITING = (
    "SELECT count(*) FROM prospect_memory_note "
    "WHERE status = 'active' AND embedding_status <> 'ready'"
)


def _kill_a_task_midway() -> None:
    """Active notes of the cluster to embed again, one backfill task queued for them,
    and the worker process running it killed (SIGKILL) once it has embedded some but not
    all: Celery gives the task back to the queue (``acks_late``, ``reject_on_worker_lost``)
    and a worker runs it again from where the notes stand."""
    with _primary() as conn:
        # As many as one backfill task takes (its limit is 1,000): what is left after the
        # kill is that task's to finish, run again, with no other task's help.
        conn.execute(
            "UPDATE prospect_memory_note SET embedding_status = 'pending' WHERE id IN "
            "(SELECT id FROM prospect_memory_note WHERE status = 'active' "
            " ORDER BY created_at DESC LIMIT 900)"
        )
        row = conn.execute(_WAITING).fetchone()
        queued = int(row[0]) if row else 0
        subprocess.run(
            [sys.executable, "-m", "celery", "-A", "kit", "call",
             "prospect_memory.tasks.backfill_embeddings"],
            cwd=ROOT, env=_environment(), capture_output=True, check=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        left = queued
        while time.monotonic() < deadline:
            row = conn.execute(_WAITING).fetchone()
            left = int(row[0]) if row else 0
            if 0 < left < queued:  # the task is under way
                break
            time.sleep(0.02)
    if not 0 < left < queued:
        raise SystemExit(f"cluster: the backfill did not start within 60 s ({left} of {queued})")
    children = [
        child
        for name in WORKERS
        if (pid := _pid(name)) is not None
        for child in psutil.Process(pid).children()
    ]
    if not children:
        raise SystemExit("cluster: no Celery worker process to kill")
    before = {child.pid: child.cpu_times().user for child in children}
    time.sleep(0.2)
    busy = max(children, key=lambda child: child.cpu_times().user - before[child.pid])
    busy.send_signal(signal.SIGKILL)
    with _primary() as conn:
        row = conn.execute(_WAITING).fetchone()
    print(
        json.dumps({"killed": busy.pid, "notes to embed": queued, "left at the kill": left,
                    "left after it": int(row[0]) if row else 0}),
        flush=True,
    )  # fmt: skip


def _kill_tree(name: str) -> None:
    pid = _pid(name)
    if pid is None:
        return
    process = psutil.Process(pid)
    for child in process.children(recursive=True):
        child.send_signal(signal.SIGKILL)
    process.send_signal(signal.SIGKILL)
    (HOME / f"{name}.pid").unlink(missing_ok=True)


def _faults() -> dict[str, tuple[Callable[[], None], Callable[[], None]]]:
    from bench.cluster import start_web, start_worker
    from kit.standby import Standby, _binaries

    state = json.loads((HOME / "state.json").read_text())
    standby = Standby(state["primary"], HOME / "replica")

    def stop_replica() -> None:
        standby.stop()

    def start_replica() -> None:
        standby.start()

    def restart_primary() -> None:
        # pg_ctl restarts with the options the server was started with (postmaster.opts);
        # its log goes to the file, or the server would hold our end of its output open.
        pgdata = HOME / "data" / "postgres"
        subprocess.run(
            [str(_binaries() / "pg_ctl"), "--pgdata", str(pgdata), "--wait", "-m", "fast",
             "--log", str(pgdata / "log"), "restart"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            user="embedded_postgres" if os.geteuid() == 0 else None,
        )  # fmt: skip

    return {
        "replica stopped": (stop_replica, start_replica),
        "web node killed": (lambda: _kill_tree("web1"), lambda: start_web("web1", _environment())),
        # The worker's main process starts a new pool process by itself.
        "worker killed mid-task": (_kill_a_task_midway, lambda: None),
        "a whole worker killed": (
            lambda: _kill_tree("worker1"),
            lambda: start_worker("worker1", _environment()),
        ),
        "primary restarted": (restart_primary, lambda: None),
    }


def _with_django() -> None:
    """This process as the cluster's web nodes are (its database, its keys), for the load's
    agents and its checker."""
    import django

    os.environ.update(_environment())
    os.environ["LOG_LEVEL"] = "WARNING"
    django.setup()


def run(seconds: float = 20.0, only: list[str] | None = None) -> list[dict[str, object]]:
    _with_django()
    from django.db import connections

    from bench.load import check, drive, make_agents

    rows: list[dict[str, object]] = []
    faults = _faults()
    unknown = set(only or ()) - set(faults)
    if unknown:
        raise SystemExit(f"cluster: no fault named {sorted(unknown)}; known: {sorted(faults)}")
    base = f"http://{ADDRESS}"
    for name, (inject, mend) in faults.items():
        if only and name not in only:
            continue
        connections.close_all()
        agents = make_agents(8, 2, base)
        ran: dict[str, Any] = {}

        def load(agents: list[Any] = agents, ran: dict[str, Any] = ran) -> None:
            ran["outcome"] = asyncio.run(drive(base, agents, seconds))

        thread = threading.Thread(target=load)
        thread.start()
        time.sleep(seconds / 4)
        inject()
        time.sleep(seconds / 4)
        before = _replica_reads()
        mend()
        mended = time.monotonic()
        back = None
        while time.monotonic() < mended + seconds + 30:
            if _replica_reads() > before:
                back = time.monotonic() - mended
                break
            time.sleep(0.2)
        thread.join()
        outcome = ran["outcome"]
        connections.close_all()  # a fault may have ended this process's connections too
        problems = [p for p in check(outcome) if "were 5xx" not in p]
        missing = [p for p in problems if p.endswith("is missing")]
        _, unembedded = _checked([])
        statuses = outcome.statuses
        rows.append({
            "fault": name,
            "requests": outcome.requests,
            "not 2xx": sum(n for status, n in statuses.items() if status != 200),
            "statuses": ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())),
            "errors in answers": ", ".join(f"{k}: {v}" for k, v in outcome.codes.most_common()),
            "saves acknowledged": len(outcome.saves),
            "saves lost": len(missing),
            "other problems": len(problems) - len(missing),
            "notes not embedded after 60 s": unembedded,
            "replica reads again after (s)": None if back is None else round(back, 1),
        })  # fmt: skip
        for problem in problems[:10]:
            print(f"  {name}: {problem}", file=sys.stderr)
        print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict[str, object]]) -> str:
    """The runs as a Markdown table, for docs/operations.md."""
    heads = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for row in rows:
        lines.append("| " + " | ".join("-" if v is None else str(v) for v in row.values()) + " |")
    return "\n".join(lines)
