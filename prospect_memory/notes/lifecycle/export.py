"""Prospect notes' records in an export: ``dossier`` (one per company domain), ``note``
(active and archived) and ``compaction``. Texts are decrypted; a note names the note that
replaced it (``superseded_by``) and a compaction its notes (``merged_note``,
``replaced_notes``) by the exporting Kit's ids, and each names its dossier by ``domain``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prospect_memory.core.lifecycle import ExportScope
from prospect_memory.core.lifecycle.exporting import (
    FLAG_COLUMNS,
    flags_of,
    moment,
    opened,
    pages,
    ref,
)
from prospect_memory.notes.models import Compaction, Dossier, Note

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


def records(scope: ExportScope) -> Iterator[dict[str, Any]]:
    account = scope.account
    owner = account.pk
    dossiers = Dossier.objects.filter(account=account)
    for row in pages(dossiers, DOSSIER_COLUMNS, ("domain",), scope.batch_rows):
        yield _dossier_record(row)
    notes = Note.objects.filter(account=account)
    for row in pages(
        notes, NOTE_COLUMNS, ("dossier_id", "status", "-observed_at", "id"), scope.batch_rows
    ):
        yield _note_record(row, owner)
    compactions = Compaction.objects.filter(account=account)
    order = ("dossier_id", "-created_at", "id")
    for row in pages(compactions, COMPACTION_COLUMNS, order, scope.batch_rows):
        yield _compaction_record(row)


def _dossier_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "dossier",
        "domain": row["domain"],
        "active_note_count": row["active_note_count"],
        "created_at": moment(row["created_at"]),
        "updated_at": moment(row["updated_at"]),
    }


def _note_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "note",
        "id": ref(row["id"]),
        "domain": row["dossier__domain"],
        "status": row["status"],
        "title": opened(Note, "title", account_id, row),
        "body": opened(Note, "body", account_id, row),
        "source_urls": row["source_urls"],
        "observed_at": moment(row["observed_at"]),
        "created_at": moment(row["created_at"]),
        "superseded_by": ref(row["superseded_by_id"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "integrity": flags_of(Note, account_id, row),
    }


def _compaction_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": ref(row["id"]),
        "domain": row["dossier__domain"],
        "merged_note": ref(row["merged_note_id"]),
        "replaced_notes": [str(note_id) for note_id in row["replaced_note_ids"]],
        "expected_note_count": row["expected_note_count"],
        "created_at": moment(row["created_at"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "restored_at": moment(row["restored_at"]),
        "restored_by": row["restored_by__user__username"],
    }
