"""Business memory's section of the memory health page (SPEC 13): the account layer's
entries by category, their average confidence, how many are in the knowledge index and how
far promotion lags, how many went unused for a period, and the last consolidation run.

Members' own contexts are not counted: they are theirs alone, even in totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Avg, Count
from django.utils import timezone

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Category, ConsolidationRun, Entry, Layer, Promotion
from prospect_memory.business.records import EntryView, PromotionLag
from prospect_memory.business.services.promotion import promotion_lag, qualifying
from prospect_memory.business.visibility import shown, unexpired
from prospect_memory.core.health import FLAGGED_SHOWN, HealthSection


@dataclass(frozen=True)
class BusinessHealth:
    by_category: list[tuple[str, int]]
    entries: int
    average_confidence: float | None
    promoted: int
    lag: PromotionLag
    unused: int
    idle_days: int
    last_run: ConsolidationRun | None
    #: Shared entries whose current version Kit flagged (SPEC 15), newest first.
    flagged: list[EntryView]
    flagged_count: int


def business_health(account) -> BusinessHealth:
    shared = unexpired(
        Entry.objects.filter(account=account, layer=Layer.ACCOUNT, status=Entry.Status.LIVE)
    )
    counts = dict(shared.values_list("category").annotate(n=Count("pk")).order_by())
    flagged = shared.filter(flagged_at__isnull=False)
    idle_days = business_settings.CONSOLIDATION_IDLE_DAYS
    return BusinessHealth(
        by_category=[(label, counts.get(value, 0)) for value, label in Category.choices],
        entries=sum(counts.values()),
        average_confidence=shared.aggregate(avg=Avg("confidence"))["avg"],
        promoted=Promotion.objects.filter(
            account=account, entry__in=qualifying(Entry.objects.filter(account=account))
        ).count(),
        lag=promotion_lag(account=account),
        unused=shared.filter(used_at__lte=timezone.now() - timedelta(days=idle_days)).count(),
        idle_days=idle_days,
        last_run=ConsolidationRun.objects.filter(account=account).first(),
        flagged=[
            EntryView.of(e) for e in shown(flagged.order_by("-flagged_at", "key"))[:FLAGGED_SHOWN]
        ],
        flagged_count=flagged.count(),
    )


def section(account) -> HealthSection:
    return HealthSection("business_memory/_health.html", {"health": business_health(account)})
