"""Retention (SPEC 16): how long audit events, usage events, evictions and archived notes
are kept, applied by a daily job (``apply_retention``), and closed accounts erased once
their retention has passed (``erase_closed_accounts``). Each setting's number lives in
``lifecycle.conf`` (evictions: business memory's ``RETIRED_KEEP_DAYS``); the memory health
page shows them with the last run."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import DatabaseError, models, transaction
from django.utils import timezone

from outreach.models import Account
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import EntryEvent
from prospect_memory.business.services.consolidate import retired_purge
from prospect_memory.core.models import RetentionRun, UsageEvent
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.erase import Erased, erase_account
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note

log = logging.getLogger(__name__)

#: What erases a closed account (the erasure names it as who did it).
JOB = "retention"


@dataclass(frozen=True)
class Rule:
    name: str
    #: What the page calls what it removes.
    what: str
    days: int
    #: Whether 0 days keeps for ever (the lifecycle's settings); business memory's
    #: RETIRED_KEEP_DAYS of 0 purges at once.
    zero_keeps: bool = True

    @property
    def for_ever(self) -> bool:
        return self.days == 0 and self.zero_keeps


def rules() -> list[Rule]:
    """Each retention setting, as the health page shows it (0 days: kept for ever)."""
    return [
        Rule("audit_events", "Audit and entry events", lifecycle_settings.AUDIT_EVENTS_DAYS),
        Rule("usage_events", "Usage events", lifecycle_settings.USAGE_EVENTS_DAYS),
        Rule(
            "evictions",
            "Evicted and expired entries",
            business_settings.RETIRED_KEEP_DAYS,
            zero_keeps=False,
        ),
        Rule(
            "archived_notes",
            "Archived notes (a compaction can be undone until then)",
            lifecycle_settings.ARCHIVED_NOTES_DAYS,
        ),
        Rule("closed_accounts", "Closed accounts", lifecycle_settings.CLOSED_ACCOUNT_DAYS),
    ]


def _delete_in_batches(rows: models.QuerySet) -> int:
    model = rows.model
    deleted = 0
    while True:
        ids = list(
            rows.order_by().values_list("pk", flat=True)[: lifecycle_settings.RETENTION_BATCH_ROWS]
        )
        if not ids:
            return deleted
        batch = model._base_manager.filter(pk__in=ids)
        deleted += batch._raw_delete(batch.db)


def _archived_notes_before(cutoff: datetime) -> int:
    """Compactions older than ``cutoff`` become final: the notes each archived go, and so
    does the record that could bring them back. One compaction at a time, its dossier locked
    as an undo locks it; a compaction already undone only loses its record (the notes it
    listed are active again, or archived by a later compaction that can still be undone)."""
    deleted = 0
    while True:
        old = list(
            Compaction.objects.filter(created_at__lt=cutoff)
            .order_by("created_at")
            .values_list("pk", flat=True)[: lifecycle_settings.RETENTION_BATCH_ROWS]
        )
        if not old:
            return deleted
        for pk in old:
            deleted += _make_final(pk)


def _make_final(compaction_id) -> int:
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


def apply_retention(*, now: datetime | None = None) -> RetentionRun:
    """Apply every retention setting once, in every account; what each removed is kept on
    the run (the memory health page shows the last one)."""
    now = now or timezone.now()
    run = RetentionRun.objects.create(started_at=now)
    days = {rule.name: (0 if rule.for_ever else rule.days) for rule in rules()}
    removed: dict[str, int] = {}
    if days["audit_events"]:
        cutoff = now - timedelta(days=days["audit_events"])
        removed["audit_events"] = _delete_in_batches(
            AuditEvent.objects.filter(created_at__lt=cutoff)
        ) + _delete_in_batches(EntryEvent.objects.filter(created_at__lt=cutoff))
    if days["usage_events"]:
        cutoff = now - timedelta(days=days["usage_events"])
        removed["usage_events"] = _delete_in_batches(
            UsageEvent.objects.filter(created_at__lt=cutoff)
        )
    removed["evictions"] = retired_purge(now=now)
    if days["archived_notes"]:
        removed["archived_notes"] = _archived_notes_before(
            now - timedelta(days=days["archived_notes"])
        )
    kept_for = timedelta(days=lifecycle_settings.RETENTION_RUNS_DAYS)
    RetentionRun.objects.filter(started_at__lt=now - kept_for).delete()
    run.removed = removed
    run.finished_at = timezone.now()
    run.save(update_fields=["removed", "finished_at"])
    return run


def closed_accounts_due(*, now: datetime | None = None) -> models.QuerySet:
    """Accounts closed longer ago than their retention (none when it is 0: kept)."""
    days = lifecycle_settings.CLOSED_ACCOUNT_DAYS
    if not days:
        return Account.objects.none()
    cutoff = (now or timezone.now()) - timedelta(days=days)
    return Account.objects.filter(closed_at__isnull=False, closed_at__lt=cutoff)


def erase_closed_accounts(*, now: datetime | None = None) -> list[Erased]:
    """Erase every account whose retention after closing has passed, one at a time: each
    is locked and checked again first (one reopened meanwhile stays), and one that fails is
    logged and left for the next run without holding back the others."""
    erased = []
    for account_id in (
        closed_accounts_due(now=now).order_by("closed_at").values_list("pk", flat=True)
    ):
        try:
            with transaction.atomic():
                account = closed_accounts_due(now=now).select_for_update().filter(pk=account_id)
                account = account.first()
                if account is not None:
                    erased.append(erase_account(account, by=JOB))
        except DatabaseError:
            log.exception("erasing closed account %s failed; the next run tries again", account_id)
    return erased


def last_run() -> RetentionRun | None:
    return RetentionRun.objects.filter(finished_at__isnull=False).first()
