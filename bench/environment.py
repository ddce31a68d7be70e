"""The environment every in-process benchmark runs in: Kit's settings, a throwaway
embedded PostgreSQL (unless ``DATABASE_URL`` is set), the chosen embedding provider, the
migrations. One module that the benchmarks import, and that imports none of them."""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import tempfile
import uuid
from pathlib import Path


def add_provider_argument(parser: argparse.ArgumentParser, default: str = "semantic") -> None:
    """``--provider``, which :func:`setup` reads: the embedding provider saves, stores and
    searches use. ``KIT_BENCH_PROVIDER`` sets its default, for a harness that runs a
    benchmark as it is (the peers' side by side, ``scripts/bench-peers``)."""
    parser.add_argument(
        "--provider",
        default=os.environ.get("KIT_BENCH_PROVIDER", default),
        help="embedding provider for saves, stores and searches (semantic, hashing, ...)",
    )


def setup(args: argparse.Namespace) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="kit-bench-"))
    # Removed at exit, after the throwaway server (registered later, so stopped first).
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    os.environ.setdefault("KIT_DATA_DIR", str(scratch / "data"))
    os.environ.setdefault("SECRET_KEY", "kit-bench-" + uuid.uuid4().hex * 2)
    os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # Servers the benchmarks start listen on plain-http loopback, without TLS.
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
    from prospect_memory.core.crypto import generate_key

    os.environ.setdefault("PROSPECT_MEMORY_ENCRYPTION_KEYS", generate_key())
    os.environ["PROSPECT_MEMORY_EMBEDDING_PROVIDER"] = args.provider
    if not os.environ.get("DATABASE_URL"):
        from kit.db import database_url, throwaway_database

        os.environ["DATABASE_URL"] = database_url(throwaway_database(scratch))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from prospect_memory.notes.conf import notes_settings

    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "DAILY_SAVE_LIMIT": 10**9}
    notes_settings.reload()
    call_command("migrate", verbosity=0)
