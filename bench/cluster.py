"""Kit as several machines would run it, on one machine: ``scripts/cluster up|down|status``.

``up`` starts, each waited for until it answers:

- the primary: Kit's embedded PostgreSQL under ``.cluster/data`` (migrated, the demo seeded);
- a streaming replica of it (``kit.standby``: ``pg_basebackup -R``, a hot standby);
- Redis as the broker: the machine's on 127.0.0.1:6379 (database 14), or a clear message;
- two web nodes (gunicorn, two workers each) behind one address, ``127.0.0.1:8100``:
  both listen there with ``SO_REUSEPORT`` and the kernel spreads connections between them
  (no proxy to run); each also listens on a port of its own (8101, 8102) for its own
  readiness and for a fault run to tell them apart;
- two Celery workers.

``faults`` runs each fault under load and prints what clients saw (bench/cluster_faults.py).
``down`` stops them all (the data stays for the next ``up``; ``down --wipe`` removes it).
``status`` says what runs. Every process's pid, address and log is under ``.cluster/``
(``KIT_CLUSTER_DIR``; ``KIT_CLUSTER_PORT`` moves the ports).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Where the cluster keeps its data, pids and logs, and its first port (the one address;
#: the nodes' own are the next two): another folder and port run a second cluster beside
#: it (the smoke test does).
HOME = Path(os.environ.get("KIT_CLUSTER_DIR") or ROOT / ".cluster").resolve()
PORT = int(os.environ.get("KIT_CLUSTER_PORT") or 8100)
ADDRESS = f"127.0.0.1:{PORT}"
NODES = {"web1": f"127.0.0.1:{PORT + 1}", "web2": f"127.0.0.1:{PORT + 2}"}
WORKERS = ("worker1", "worker2")
BROKER = os.environ.get("KIT_CLUSTER_BROKER") or "redis://127.0.0.1:6379/14"
METRICS_TOKEN = "cluster-metrics-token"  # noqa: S105  (a local cluster's, printed)


def _environment() -> dict[str, str]:
    from kit.db import database_url

    state = json.loads((HOME / "state.json").read_text())
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kit.settings",
        "KIT_DATA_DIR": str(HOME / "data"),
        "DATABASE_URL": database_url(state["primary"]),
        "DATABASE_REPLICA_URLS": database_url(state["replica"]),
        "CELERY_BROKER_URL": BROKER,
        "KIT_METRICS_TOKEN": METRICS_TOKEN,
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "CONN_MAX_AGE": "60",
        "KIT_PUBLIC_URL": f"http://{ADDRESS}",
    }


def _pid(name: str) -> int | None:
    path = HOME / f"{name}.pid"
    if not path.exists():
        return None
    pid = int(path.read_text().strip() or 0)
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return None
    return pid


def _ready(address: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{address}/readyz", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError as error:
            last = str(error)
        time.sleep(0.3)
    raise SystemExit(f"cluster: {address} did not become ready: {last}")


def _broker_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(BROKER, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def start_web(name: str, env: dict[str, str]) -> None:
    metrics = HOME / f"{name}-metrics"
    shutil.rmtree(metrics, ignore_errors=True)
    metrics.mkdir()
    subprocess.run(
        [
            sys.executable, "-m", "gunicorn", "kit.wsgi",
            "--bind", ADDRESS, "--bind", NODES[name], "--reuse-port",
            "--workers", "2", "--daemon",
            "--pid", str(HOME / f"{name}.pid"),
            "--error-logfile", str(HOME / f"{name}.log"),
            "--access-logfile", str(HOME / f"{name}.access.log"),
        ],
        cwd=ROOT, env={**env, "PROMETHEUS_MULTIPROC_DIR": str(metrics)}, check=True,
    )  # fmt: skip


def start_worker(name: str, env: dict[str, str]) -> None:
    # A worker logs to its standard error (kit/celery.py), kept in its log file here.
    with (HOME / f"{name}.log").open("a") as log:
        subprocess.Popen(
            [
                sys.executable, "-m", "celery", "-A", "kit", "worker",
                "--concurrency", "1", "-n", f"{name}@%h",
                "--pidfile", str(HOME / f"{name}.pid"),
            ],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + 30
    while _pid(name) is None and time.monotonic() < deadline:
        time.sleep(0.1)


def up() -> None:
    if not _broker_answers():
        raise SystemExit(
            "cluster: no Redis answers on 127.0.0.1:6379. Start one (redis-server --port 6379) "
            "and run scripts/cluster up again."
        )
    HOME.mkdir(exist_ok=True)
    HOME.chmod(0o755)
    os.environ["KIT_DATA_DIR"] = str(HOME / "data")
    from kit.db import embedded_database
    from kit.standby import Standby

    primary = embedded_database(HOME / "data")
    standby = Standby(primary, HOME / "replica")
    if not (standby.pgdata / "PG_VERSION").exists():
        _migrate_and_seed(primary)
        standby.create()
    if not (standby.pgdata / "postmaster.pid").exists():
        standby.start()
    (HOME / "state.json").write_text(
        json.dumps({"primary": primary, "replica": standby.settings()}, indent=2)
    )
    env = _environment()
    for name in NODES:
        if _pid(name) is None:
            start_web(name, env)
    for name in WORKERS:
        if _pid(name) is None:
            start_worker(name, env)
    for address in NODES.values():
        _ready(address)
    _workers_answer(env)
    status()
    print(f"\nKit answers on http://{ADDRESS} (metrics token: {METRICS_TOKEN}).")


def _migrate_and_seed(primary: dict[str, Any]) -> None:
    from kit.db import database_url

    env = {
        **os.environ,
        "DATABASE_URL": database_url(primary),
        "KIT_DATA_DIR": str(HOME / "data"),
        "KIT_PUBLIC_URL": f"http://{ADDRESS}",
    }
    manage = [sys.executable, "manage.py"]
    for command in (
        ["migrate", "--no-input"],
        ["seed_demo", "--allow-insecure-demo"],
        ["seed_demo_research"],
    ):
        subprocess.run([*manage, *command], cwd=ROOT, env=env, check=True)


def _workers_answer(env: dict[str, str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = subprocess.run(
            [sys.executable, "-m", "celery", "-A", "kit", "inspect", "ping", "--timeout", "2"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if all(f"{name}@" in answer.stdout for name in WORKERS):
            return
        time.sleep(0.5)
    raise SystemExit("cluster: the Celery workers did not answer a ping")


def _stop(name: str, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
    pid = _pid(name)
    if pid is None:
        return
    os.kill(pid, sig)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _pid(name) is not None:
        time.sleep(0.2)
    (HOME / f"{name}.pid").unlink(missing_ok=True)


def down(*, wipe: bool = False) -> None:
    if not HOME.exists():
        print("cluster: nothing to stop")
        return
    for name in (*NODES, *WORKERS):
        _stop(name)
    from kit.standby import Standby

    state = (
        json.loads((HOME / "state.json").read_text()) if (HOME / "state.json").exists() else None
    )
    if state is not None:
        Standby(state["primary"], HOME / "replica").stop()
    subprocess.run(
        [sys.executable, "-m", "kit.db", "stop"],
        cwd=ROOT, env={**os.environ, "KIT_DATA_DIR": str(HOME / "data")}, check=False,
    )  # fmt: skip
    if wipe:
        shutil.rmtree(HOME, ignore_errors=True)
    print("cluster: stopped" + (" and wiped" if wipe else ""))


def status() -> int:
    rows = []
    for name in (*NODES, *WORKERS):
        pid = _pid(name)
        rows.append((name, f"running (pid {pid})" if pid else "stopped"))
    primary_up = (HOME / "data" / "postgres" / "postmaster.pid").exists()
    replica_up = (HOME / "replica" / "postmaster.pid").exists()
    rows.insert(0, ("primary", "running" if primary_up else "stopped"))
    rows.insert(1, ("replica", "running" if replica_up else "stopped"))
    rows.insert(2, ("broker", "answers" if _broker_answers() else "does not answer"))
    for name, state in rows:
        print(f"{name:8} {state}")
    return 0 if all("running" in s or s == "answers" for _, s in rows) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("up", "down", "status", "faults"))
    parser.add_argument("--seconds", type=float, default=20, help="faults: each run's length")
    parser.add_argument("--only", action="append", help="faults: this fault only (repeatable)")
    parser.add_argument("--wipe", action="store_true", help="down: also remove .cluster/")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.command == "up":
        up()
        return 0
    if args.command == "faults":
        from bench.cluster_faults import run, table

        print(table(run(args.seconds, only=args.only)))
        return 0
    if args.command == "down":
        down(wipe=args.wipe)
        return 0
    return status()


if __name__ == "__main__":
    raise SystemExit(main())
