"""Business memory's part in retention: entry events past the audit events' days, and
evictions past RETIRED_KEEP_DAYS (a rule of its own on the memory health page)."""

from __future__ import annotations

from datetime import timedelta

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    EntryEvent,
)
from prospect_memory.business.services.consolidate import retired_purge
from prospect_memory.core.lifecycle import AUDIT_EVENTS, RetentionScope, Rule
from prospect_memory.core.lifecycle.removing import (
    delete_in_batches,
)


def retention_rules() -> list[Rule]:
    return [
        Rule(
            "evictions",
            "Evicted and expired entries",
            business_settings.RETIRED_KEEP_DAYS,
            zero_keeps=False,
        )
    ]


def retain(scope: RetentionScope) -> dict[str, int]:
    """Entry events past the audit events' days, and evictions past RETIRED_KEEP_DAYS."""
    removed: dict[str, int] = {}
    if scope.days.get(AUDIT_EVENTS):
        cutoff = scope.now - timedelta(days=scope.days[AUDIT_EVENTS])
        removed[AUDIT_EVENTS] = delete_in_batches(
            EntryEvent.objects.filter(created_at__lt=cutoff), scope.batch_rows
        )
    removed["evictions"] = retired_purge(now=scope.now)
    return removed
