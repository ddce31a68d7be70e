"""An account's memories as one file, and that file imported into an empty account of
another Kit (SPEC 16).

The file is NDJSON: one JSON object a line, UTF-8, each line ending in ``\\n``.

1. A header: ``{"type": "kit-export", "format": 1, "account", "exported_at", "member",
   "not_included"}``. ``member`` names the member whose own business memory is in the file
   (null: none is).
2. Records, each memory's in turn as it registered (:mod:`prospect_memory.core.lifecycle`),
   by type in this order: ``dossier`` (one per company domain), ``note`` (active and
   archived), ``compaction`` (``prospect_memory.notes.lifecycle``), ``entry`` (business
   memory: the shared layer, and the exporting member's own layer, in every status) and
   ``entry_version`` (the versions kept of those entries; ``business.lifecycle``). Texts
   and values are decrypted; ids are the exporting Kit's, and a record names another by
   that id (``superseded_by``, ``merged_note``, ``replaced_notes``, ``alias_of``,
   ``entry``) or a dossier by its ``domain``. People are named by username
   (``member``, ``written_by``, ``restored_by``; null when the seat is gone), agents by
   their OAuth client's name (``client``).
3. A manifest, the last line: ``{"type": "manifest", "counts": {type: records},
   "sha256"}``, the digest of every line before it, newlines included.

Not in the file: events (audit, usage and entry events hold ids and labels, no content),
embeddings (the importing Kit embeds the text again with its own model), and the knowledge
index (rebuilt from the entries).

``prospect_memory.lifecycle.imports`` reads the file into an empty account.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.db import connections, router, transaction
from django.utils import timezone

from outreach.models import Account, Member
from prospect_memory.core.integrity import readable_value
from prospect_memory.core.lifecycle import (
    HEADER,
    MANIFEST,
    ExportScope,
    lifecycles,
    record_types,
)
from prospect_memory.lifecycle.conf import lifecycle_settings

FORMAT = 1
NOT_INCLUDED = (
    "events: audit, usage and entry events (ids and labels, never content)",
    "embeddings: the importing Kit embeds the text again with its own model",
    "the knowledge index: rebuilt from the imported entries",
)
#: Made the first statement of an export's transaction: every read sees one moment.
SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"


# --- export -----------------------------------------------------------------------------


def export_lines(account: Account, *, member: Member | None = None) -> Iterator[bytes]:
    """The export of ``account``, a line at a time (header, records, manifest).

    ``member`` (a member of the account) is who exports: their own business memory is
    included, nobody else's ever is. Every read runs in one read-only transaction that sees
    the database as it was at its first read, so saves made meanwhile are either wholly in
    the file or not at all; rows are fetched EXPORT_BATCH_ROWS at a time, so an export of
    any size takes the same memory.
    """
    if member is not None and member.account_id != account.pk:
        raise ValueError(f"{member} is not a member of account {account.slug}")
    digest, counts = hashlib.sha256(), dict.fromkeys(record_types(), 0)
    with _snapshot():
        for record in _records(account, member):
            line = _encode(record)
            digest.update(line)
            if record["type"] in counts:
                counts[record["type"]] += 1
            yield line
    yield _encode({"type": MANIFEST, "counts": counts, "sha256": digest.hexdigest()})


def export_filename(account: Account, moment: datetime | None = None) -> str:
    """The name an export is offered under."""
    moment = moment or timezone.now()
    return f"kit-export-{account.slug}-{moment:%Y%m%dT%H%M%SZ}.ndjson"


@contextmanager
def _snapshot():
    """A read-only transaction at REPEATABLE READ, on the database chosen for this read (a
    replica that may serve it: ``pgreplicas.routing.streamed``, or the primary); inside a
    caller's transaction, that transaction (whose reads are as consistent as its isolation
    makes them)."""
    # A statement names no model: the routers are asked about "no model" (``None``).
    alias = router.db_for_read(None)  # type: ignore[arg-type]
    db = connections[alias]
    nested = db.in_atomic_block
    if not nested:
        # Its probe would otherwise be the transaction's first statement, before SNAPSHOT.
        db.close_if_health_check_failed()
    with transaction.atomic(using=alias):
        if not nested:
            with db.cursor() as cursor:
                cursor.execute(SNAPSHOT)
                # A reader that stops reading ends the export rather than hold the snapshot
                # (and the database's clean-up) for ever; the file then has no manifest.
                idle = lifecycle_settings.EXPORT_IDLE_SECONDS * 1000
                cursor.execute(f"SET LOCAL idle_in_transaction_session_timeout = {int(idle)}")
        yield


def _encode(record: dict) -> bytes:
    # As every reader receives stored text: no character the write path refuses, kept from
    # before the check, leaves in an export (an import would refuse it).
    text = json.dumps(
        readable_value(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return text.encode("utf-8") + b"\n"


def _records(account: Account, member: Member | None) -> Iterator[dict]:
    yield {
        "type": HEADER,
        "format": FORMAT,
        "account": account.slug,
        "exported_at": timezone.now().isoformat(),
        "member": member.user.get_username() if member else None,
        "not_included": list(NOT_INCLUDED),
    }
    scope = ExportScope(account, member, lifecycle_settings.EXPORT_BATCH_ROWS)
    for memory in lifecycles():
        yield from memory.records(scope)
