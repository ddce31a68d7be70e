"""Retention (SPEC 16): how long audit events, usage events, evictions and archived notes
are kept, applied by a daily job (``apply_retention``), and closed accounts erased once
their retention has passed (``erase_closed_accounts``). Each setting's number lives in
``lifecycle.conf`` (evictions: business memory's ``RETIRED_KEEP_DAYS``); the memory health
page shows them with the last run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import models, transaction
from django.utils import timezone

from outreach.models import Account
from prospect_memory.business.conf import business_settings
from prospect_memory.business.consolidation import retired_purge
from prospect_memory.business.models import EntryEvent
from prospect_memory.core.models import RetentionRun, UsageEvent
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.erase import Erased, erase_account
from prospect_memory.notes.models import AuditEvent, Compaction, Note

#: Rows deleted per statement: each batch is its own short transaction, so a large
#: backlog never holds locks for long.
BATCH_ROWS = 5000

#: What erases a closed account (the erasure names it as who did it).
JOB = "retention"


@dataclass(frozen=True)
class Rule:
    name: str
    #: What the page calls what it removes.
    what: str
    days: int


def rules() -> list[Rule]:
    """Each retention setting, as the health page shows it (0 days: kept for ever)."""
    return [
        Rule("audit_events", "Audit and entry events", lifecycle_settings.AUDIT_EVENTS_DAYS),
        Rule("usage_events", "Usage events", lifecycle_settings.USAGE_EVENTS_DAYS),
        Rule("evictions", "Evicted and expired entries", business_settings.RETIRED_KEEP_DAYS),
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
        ids = list(rows.order_by().values_list("pk", flat=True)[:BATCH_ROWS])
        if not ids:
            return deleted
        batch = model._base_manager.filter(pk__in=ids)
        deleted += batch._raw_delete(batch.db)


def _archived_notes_before(cutoff: datetime) -> int:
    """Compactions older than ``cutoff`` become final: the notes they replaced go, and so
    does the record that could bring them back."""
    deleted = 0
    old = Compaction.objects.filter(created_at__lt=cutoff).order_by("created_at")
    while True:
        batch = list(old.values_list("pk", "account_id", "replaced_note_ids")[:500])
        if not batch:
            return deleted
        with transaction.atomic():
            for _pk, account_id, replaced in batch:
                gone, _ = Note.objects.filter(
                    account_id=account_id, pk__in=replaced, status=Note.Status.ARCHIVED
                ).delete()
                deleted += gone
            Compaction.objects.filter(pk__in=[pk for pk, _, _ in batch]).delete()


def apply_retention(*, now: datetime | None = None) -> RetentionRun:
    """Apply every retention setting once, in every account; what each removed is kept on
    the run (the memory health page shows the last one)."""
    now = now or timezone.now()
    run = RetentionRun.objects.create(started_at=now)
    days = {rule.name: rule.days for rule in rules()}
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
    # The runs themselves are kept as long as usage events (at least a month).
    kept_for = timedelta(days=max(days["usage_events"], 31))
    RetentionRun.objects.filter(started_at__lt=now - kept_for).delete()
    run.removed = removed
    run.finished_at = timezone.now()
    run.save(update_fields=["removed", "finished_at"])
    return run


def closed_accounts_due(*, now: datetime | None = None) -> models.QuerySet:
    """Accounts closed longer ago than their retention."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=lifecycle_settings.CLOSED_ACCOUNT_DAYS)
    return Account.objects.filter(closed_at__isnull=False, closed_at__lt=cutoff)


def erase_closed_accounts(*, now: datetime | None = None) -> list[Erased]:
    """Erase every account whose retention after closing has passed, one at a time."""
    erased = []
    for account in closed_accounts_due(now=now).order_by("closed_at"):
        erased.append(erase_account(account, by=JOB))
    return erased


def last_run() -> RetentionRun | None:
    return RetentionRun.objects.filter(finished_at__isnull=False).first()
