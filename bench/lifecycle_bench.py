#!/usr/bin/env python
"""Export and erasure of a large account (SPEC 16): time and peak memory.

Seeds one account with ``--notes`` notes (10 per company, each with a 384-dimension vector,
as the local model writes) and ``--entries`` business memory entries with two versions
each, then measures, on this machine:

- ``export``: ``export_lines`` streamed to a file (the REST endpoint and ``export_memory``
  stream the same lines): wall time, the file's size, and the peak Python heap while it ran
  (``tracemalloc``) next to the process's peak resident size;
- ``import``: that file read back into an empty account (``import_lines``);
- ``erase company``: one company of the account (``erase_company``);
- ``erase account``: the whole account (``erase_account``, what the closed-account job runs).

Run: ``.venv/bin/python bench/lifecycle_bench.py`` (100k notes; ``--notes 10000`` quick).
It starts its own throwaway embedded PostgreSQL unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
import tracemalloc
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import add_provider_argument, setup  # noqa: E402
from bench.memory_bench import body_for  # noqa: E402

NOTES_PER_COMPANY = 10
DIMENSIONS = 384


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vector(rng: random.Random) -> str:
    return "[" + ",".join(f"{rng.uniform(-0.1, 0.1):.5f}" for _ in range(DIMENSIONS)) + "]"


def seed(rng: random.Random, notes: int):
    """One account with ``notes`` notes over ``notes / 10`` companies, by COPY."""
    from django.db import connection

    from outreach.models import Account
    from prospect_memory.core.crypto import binding, keyring
    from prospect_memory.notes.selectors import NOTE_TABLE
    from tests import factories

    account = factories.account("big-co", name="Big Co")
    admin = factories.member(account, "owner@big.example", admin=True)
    ring = keyring()
    now = datetime.now(UTC)
    companies = -(-notes // NOTES_PER_COMPANY)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM prospect_memory_dossier")
        first = cursor.fetchone()[0] + 1
    pg = connection.connection
    with pg.cursor() as cur:
        with cur.copy(
            "COPY prospect_memory_dossier (id, account_id, domain, active_note_count, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            for c in range(companies):
                copy.write_row(
                    (first + c, account.pk, f"company{c}.com", NOTES_PER_COMPANY, now, now)
                )
        with cur.copy(
            "COPY prospect_memory_note (id, account_id, dossier_id, title_ciphertext, "
            "body_ciphertext, body_bytes, source_urls, observed_at, created_at, status, "
            "embedding, embedding_model, embedding_status, member_id) FROM STDIN"
        ) as copy:
            for c in range(companies):
                domain = f"company{c}.com"
                for k in range(NOTES_PER_COMPANY):
                    note_id = uuid.uuid4()
                    body = body_for(rng, domain)
                    ctx = {"table": NOTE_TABLE, "account_id": account.pk, "row_id": note_id}
                    copy.write_row(
                        (
                            note_id,
                            account.pk,
                            first + c,
                            ring.encrypt(f"Finding {k}", context=binding(**ctx, field="title")),
                            ring.encrypt(body, context=binding(**ctx, field="body")),
                            len(body.encode()),
                            [f"https://{domain}/news/{k}"],
                            (now - timedelta(days=rng.randint(0, 90))).date(),
                            now,
                            "active",
                            vector(rng),
                            "all-minilm-l6-v2-int8",
                            "ready",
                            admin.pk,
                        )
                    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('prospect_memory_dossier', 'id'), "
            "(SELECT max(id) FROM prospect_memory_dossier))"
        )
        cursor.execute("ANALYZE")
    return Account.objects.get(pk=account.pk), admin


def seed_entries(admin, entries: int) -> None:
    from outreach.access import Actor
    from prospect_memory.business.services.store import entry_store

    actor = Actor.for_member(admin)
    for i in range(entries):
        entry_store(actor=actor, key=f"fact:{i}", value={"n": i, "text": "x" * 200})
        entry_store(
            actor=actor, key=f"fact:{i}", value={"n": i, "text": "y" * 200}, expected_version=1
        )


def measured(what: str, work):
    tracemalloc.start()
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(
        f"{what:<16} {seconds:8.1f} s   peak Python heap {peak / 2**20:7.1f} MiB   "
        f"process peak RSS {peak_rss_mib():7.0f} MiB",
        flush=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--entries", type=int, default=1000)
    add_provider_argument(parser, default="hashing")
    args = parser.parse_args()
    setup(args)
    from django.conf import settings

    from prospect_memory.business.conf import business_settings

    settings.BUSINESS_MEMORY = {"ACCOUNT_CAPACITY": max(args.entries, 1000)}
    business_settings.reload()
    from outreach.access import Actor
    from prospect_memory.lifecycle.erase import erase_account, erase_company
    from prospect_memory.lifecycle.export import export_lines
    from prospect_memory.lifecycle.imports import import_lines
    from tests import factories

    rng = random.Random(7)
    started = time.perf_counter()
    account, admin = seed(rng, args.notes)
    seed_entries(admin, args.entries)
    print(
        f"seeded {args.notes:,} notes and {args.entries:,} entries (two versions each) in "
        f"{time.perf_counter() - started:.0f} s; process RSS before measuring "
        f"{peak_rss_mib():.0f} MiB",
        flush=True,
    )
    path = Path(tempfile.mkdtemp(prefix="kit-export-")) / "export.ndjson"

    def export():
        with path.open("wb") as out:
            for line in export_lines(account):
                out.write(line)

    measured("export", export)
    print(f"{'':<16} {path.stat().st_size / 2**20:8.1f} MiB written", flush=True)
    target = factories.account("copy-co", name="Copy Co")

    def imported():
        with path.open("rb") as lines:
            return import_lines(lines, target)

    measured("import", imported)
    actor = Actor.for_member(admin)
    measured("erase company", lambda: erase_company(actor=actor, domain="company7.com"))
    measured("erase account", lambda: erase_account(account, by="bench"))


if __name__ == "__main__":
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    main()
