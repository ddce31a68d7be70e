"""Prospect notes' part in retention: audit events past their days, and compactions past
the archived notes' days made final."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.db import transaction

from prospect_memory.core.lifecycle import ARCHIVED_NOTES, AUDIT_EVENTS, RetentionScope
from prospect_memory.core.lifecycle.removing import (
    delete_in_batches,
)
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note


def retain(scope: RetentionScope) -> dict[str, int]:
    """Audit events past their days, and compactions past the archived notes' days made
    final."""
    removed: dict[str, int] = {}
    if scope.days.get(AUDIT_EVENTS):
        cutoff = scope.now - timedelta(days=scope.days[AUDIT_EVENTS])
        removed[AUDIT_EVENTS] = delete_in_batches(
            AuditEvent.objects.filter(created_at__lt=cutoff), scope.batch_rows
        )
    if scope.days.get(ARCHIVED_NOTES):
        cutoff = scope.now - timedelta(days=scope.days[ARCHIVED_NOTES])
        removed[ARCHIVED_NOTES] = _archived_notes_before(cutoff, scope.batch_rows)
    return removed


def _archived_notes_before(cutoff: datetime, batch_rows: int) -> int:
    """Compactions older than ``cutoff`` become final: the notes each archived go, and so
    does the record that could bring them back. One compaction at a time, its dossier locked
    as an undo locks it; a compaction already undone only loses its record (the notes it
    listed are active again, or archived by a later compaction that can still be undone)."""
    deleted = 0
    while True:
        old = list(
            Compaction.objects.filter(created_at__lt=cutoff)
            .order_by("created_at")
            .values_list("pk", flat=True)[:batch_rows]
        )
        if not old:
            return deleted
        for pk in old:
            deleted += _make_final(pk)


def _make_final(compaction_id: uuid.UUID) -> int:
    with transaction.atomic():
        compaction = Compaction.objects.select_related("dossier").filter(pk=compaction_id).first()
        if compaction is None:
            return 0
        Dossier.objects.select_for_update().filter(pk=compaction.dossier_id).first()
        compaction = Compaction.objects.select_for_update().filter(pk=compaction_id).first()
        if compaction is None:
            return 0
        gone = 0
        if compaction.restored_at is None and compaction.merged_note_id is not None:
            gone, _ = Note.objects.filter(
                account_id=compaction.account_id,
                pk__in=compaction.replaced_note_ids,
                superseded_by_id=compaction.merged_note_id,
                status=Note.Status.ARCHIVED,
            ).delete()
        compaction.delete()
        return gone
