"""An account's memories as one file, and that file imported into an empty account of
another Kit (SPEC 16).

The file is NDJSON: one JSON object a line, UTF-8, each line ending in ``\\n``.

1. A header: ``{"type": "kit-export", "format": 1, "account", "exported_at", "member",
   "not_included"}``. ``member`` names the member whose own business memory is in the file
   (null: none is).
2. Records, by type in this order: ``dossier`` (one per company domain), ``note`` (active
   and archived), ``compaction``, ``entry`` (business memory: the shared layer, and the
   exporting member's own layer, in every status) and ``entry_version`` (the versions kept
   of those entries). Texts and values are decrypted; ids are the exporting Kit's, and a
   record names another by that id (``superseded_by``, ``merged_note``, ``replaced_notes``,
   ``alias_of``, ``entry``) or a dossier by its ``domain``. People are named by username
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
from datetime import date, datetime

from django.db import connection, transaction
from django.db.models import Model, Q, QuerySet
from django.utils import timezone

from outreach.models import Account, Member
from prospect_memory.business.models import Entry, EntryVersion, Layer
from prospect_memory.core.crypto import unseal
from prospect_memory.core.integrity import readable_value
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.notes.models import Compaction, Dossier, Note

FORMAT = 1
KIND = "kit-export"
MANIFEST = "manifest"
#: The record types, in the order an export writes them.
TYPES = ("dossier", "note", "compaction", "entry", "entry_version")
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
    digest, counts = hashlib.sha256(), dict.fromkeys(TYPES, 0)
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
    """A read-only transaction at REPEATABLE READ; inside a caller's transaction, that
    transaction (whose reads are as consistent as its isolation makes them)."""
    nested = connection.in_atomic_block
    if not nested:
        # Its probe would otherwise be the transaction's first statement, before SNAPSHOT.
        connection.close_if_health_check_failed()
    with transaction.atomic():
        if not nested:
            with connection.cursor() as cursor:
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
        "type": KIND,
        "format": FORMAT,
        "account": account.slug,
        "exported_at": timezone.now().isoformat(),
        "member": member.user.get_username() if member else None,
        "not_included": list(NOT_INCLUDED),
    }
    owner = account.pk
    dossiers = Dossier.objects.filter(account=account)
    for row in _pages(dossiers, DOSSIER_COLUMNS, ("domain",)):
        yield _dossier_record(row)
    notes = Note.objects.filter(account=account)
    for row in _pages(notes, NOTE_COLUMNS, ("dossier_id", "status", "-observed_at", "id")):
        yield _note_record(row, owner)
    compactions = Compaction.objects.filter(account=account)
    for row in _pages(compactions, COMPACTION_COLUMNS, ("dossier_id", "-created_at", "id")):
        yield _compaction_record(row)
    entries = Entry.objects.filter(_layers(member), account=account)
    for row in _pages(entries, ENTRY_COLUMNS, ("layer", "member_id", "status", "key", "id")):
        yield _entry_record(row, owner)
    versions = EntryVersion.objects.filter(_layers(member, through="entry__"), account=account)
    for row in _pages(versions, VERSION_COLUMNS, ("entry_id", "-version")):
        yield _version_record(row, owner)


def _layers(member: Member | None, *, through: str = "") -> Q:
    """The shared layer, and ``member``'s own."""
    shared = Q(**{f"{through}layer": Layer.ACCOUNT})
    if member is None:
        return shared
    return shared | Q(**{f"{through}layer": Layer.MEMBER, f"{through}member": member})


def _pages(rows: QuerySet, columns: tuple[str, ...], order: tuple[str, ...]) -> Iterator[dict]:
    """``rows`` as dicts of ``columns``, fetched EXPORT_BATCH_ROWS at a time through one
    server-side cursor, in ``order`` (an index of the account's rows gives it)."""
    size = lifecycle_settings.EXPORT_BATCH_ROWS
    return rows.order_by(*order).values(*columns).iterator(chunk_size=size)


FLAG_COLUMNS = ("integrity_ciphertext", "flagged_at", "integrity_reviewed_at")
DOSSIER_COLUMNS = ("id", "domain", "active_note_count", "created_at", "updated_at")
NOTE_COLUMNS = (
    "id",
    "dossier__domain",
    "status",
    "title_ciphertext",
    "body_ciphertext",
    "source_urls",
    "observed_at",
    "created_at",
    "superseded_by_id",
    "member__user__username",
    "oauth_application__name",
    *FLAG_COLUMNS,
)
COMPACTION_COLUMNS = (
    "id",
    "dossier__domain",
    "merged_note_id",
    "replaced_note_ids",
    "expected_note_count",
    "created_at",
    "member__user__username",
    "oauth_application__name",
    "restored_at",
    "restored_by__user__username",
)
SOURCE_COLUMNS = (
    "source_pipeline_id",
    "source_execution_id",
    "source_step_id",
    "source_extracted_at",
)
WRITER_COLUMNS = ("written_by__user__username", "written_by_label", "oauth_application__name")
ENTRY_COLUMNS = (
    "id",
    "layer",
    "key",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "version",
    "strategy",
    "status",
    "alias_of_id",
    "retired_at",
    "created_at",
    "updated_at",
    "written_at",
    "expires_at",
    "used_at",
    "last_accessed_at",
    "access_count",
    "idle_periods_charged",
    "kept_apart",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)
VERSION_COLUMNS = (
    "id",
    "entry_id",
    "version",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "strategy",
    "written_at",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)


def _moment(value: datetime | date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _id(value: object) -> str | None:
    return str(value) if value is not None else None


def _opened(model: type[Model], field: str, account_id: int, row: dict) -> str:
    """The plain text of the sealed ``field`` of a row read as a dict."""
    sealed = getattr(model, field)
    return unseal(
        row[sealed.column],
        table=sealed.binding_table(model),
        account_id=account_id,
        row_id=row["id"],
        field=field,
    )


def _integrity(model: type[Model], account_id: int, row: dict) -> dict:
    text = _opened(model, "integrity_json", account_id, row)
    return {
        "flags": json.loads(text) if text else [],
        "flagged_at": _moment(row["flagged_at"]),
        "reviewed_at": _moment(row["integrity_reviewed_at"]),
    }


def _source(row: dict) -> dict:
    return {
        "pipeline_id": row["source_pipeline_id"],
        "execution_id": row["source_execution_id"],
        "step_id": row["source_step_id"],
        "extracted_at": _moment(row["source_extracted_at"]),
    }


def _dossier_record(row: dict) -> dict:
    return {
        "type": "dossier",
        "domain": row["domain"],
        "active_note_count": row["active_note_count"],
        "created_at": _moment(row["created_at"]),
        "updated_at": _moment(row["updated_at"]),
    }


def _note_record(row: dict, account_id: int) -> dict:
    return {
        "type": "note",
        "id": _id(row["id"]),
        "domain": row["dossier__domain"],
        "status": row["status"],
        "title": _opened(Note, "title", account_id, row),
        "body": _opened(Note, "body", account_id, row),
        "source_urls": row["source_urls"],
        "observed_at": _moment(row["observed_at"]),
        "created_at": _moment(row["created_at"]),
        "superseded_by": _id(row["superseded_by_id"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "integrity": _integrity(Note, account_id, row),
    }


def _compaction_record(row: dict) -> dict:
    return {
        "type": "compaction",
        "id": _id(row["id"]),
        "domain": row["dossier__domain"],
        "merged_note": _id(row["merged_note_id"]),
        "replaced_notes": [str(note_id) for note_id in row["replaced_note_ids"]],
        "expected_note_count": row["expected_note_count"],
        "created_at": _moment(row["created_at"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "restored_at": _moment(row["restored_at"]),
        "restored_by": row["restored_by__user__username"],
    }


def _written(row: dict) -> dict:
    return {
        "written_by": row["written_by__user__username"],
        "written_by_label": row["written_by_label"],
        "client": row["oauth_application__name"],
    }


def _entry_record(row: dict, account_id: int) -> dict:
    return {
        "type": "entry",
        "id": _id(row["id"]),
        "layer": row["layer"],
        "key": row["key"],
        "value": json.loads(_opened(Entry, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "version": row["version"],
        "strategy": row["strategy"],
        "status": row["status"],
        "alias_of": _id(row["alias_of_id"]),
        "retired_at": _moment(row["retired_at"]),
        "created_at": _moment(row["created_at"]),
        "updated_at": _moment(row["updated_at"]),
        "written_at": _moment(row["written_at"]),
        "expires_at": _moment(row["expires_at"]),
        "used_at": _moment(row["used_at"]),
        "last_accessed_at": _moment(row["last_accessed_at"]),
        "access_count": row["access_count"],
        "idle_periods_charged": row["idle_periods_charged"],
        "kept_apart": row["kept_apart"],
        **_written(row),
        "integrity": _integrity(Entry, account_id, row),
    }


def _version_record(row: dict, account_id: int) -> dict:
    return {
        "type": "entry_version",
        "id": _id(row["id"]),
        "entry": _id(row["entry_id"]),
        "version": row["version"],
        "value": json.loads(_opened(EntryVersion, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "strategy": row["strategy"],
        "written_at": _moment(row["written_at"]),
        **_written(row),
        "integrity": _integrity(EntryVersion, account_id, row),
    }
