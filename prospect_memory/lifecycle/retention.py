"""Retention (SPEC 16): how long audit events, usage events, evictions and archived notes
are kept, applied by a daily job (``apply_retention``), and closed accounts erased once
their retention has passed (``erase_closed_accounts``). Each setting's number lives in
``lifecycle.conf`` (evictions: business memory's ``RETIRED_KEEP_DAYS``); the memory health
page shows them with the last run."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import DatabaseError, models, transaction
from django.utils import timezone

from outreach.models import Account
from prospect_memory.core.lifecycle import (
    ARCHIVED_NOTES,
    AUDIT_EVENTS,
    CLOSED_ACCOUNTS,
    USAGE_EVENTS,
    RetentionScope,
    Rule,
    lifecycles,
)
from prospect_memory.core.lifecycle.removing import delete_in_batches, summed
from prospect_memory.core.models import RetentionRun, UsageEvent
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.erase import Erased, erase_account

log = logging.getLogger(__name__)

#: What erases a closed account (the erasure names it as who did it).
JOB = "retention"


def rules() -> list[Rule]:
    """Each retention setting, as the health page shows it (0 days: kept for ever): the
    lifecycle's, and those a memory owns (business memory's evictions) before the closed
    accounts."""
    own = [
        Rule(AUDIT_EVENTS, "Audit and entry events", lifecycle_settings.AUDIT_EVENTS_DAYS),
        Rule(USAGE_EVENTS, "Usage events", lifecycle_settings.USAGE_EVENTS_DAYS),
    ]
    memories = [rule for memory in lifecycles() for rule in memory.retention_rules()]
    archived = Rule(
        ARCHIVED_NOTES,
        "Archived notes (a compaction can be undone until then)",
        lifecycle_settings.ARCHIVED_NOTES_DAYS,
    )
    closed = Rule(CLOSED_ACCOUNTS, "Closed accounts", lifecycle_settings.CLOSED_ACCOUNT_DAYS)
    return [*own, *memories, archived, closed]


def apply_retention(*, now: datetime | None = None) -> RetentionRun:
    """Apply every retention setting once, in every account; what each removed is kept on
    the run (the memory health page shows the last one)."""
    now = now or timezone.now()
    run = RetentionRun.objects.create(started_at=now)
    days = {rule.name: (0 if rule.for_ever else rule.days) for rule in rules()}
    own: dict[str, int] = {}
    batch_rows = lifecycle_settings.RETENTION_BATCH_ROWS
    if days[USAGE_EVENTS]:
        cutoff = now - timedelta(days=days[USAGE_EVENTS])
        own[USAGE_EVENTS] = delete_in_batches(
            UsageEvent.objects.filter(created_at__lt=cutoff), batch_rows
        )
    scope = RetentionScope(now=now, days=days, batch_rows=batch_rows)
    removed = summed(own, *(memory.retain(scope) for memory in lifecycles()))
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
