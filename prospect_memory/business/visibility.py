"""What "live", "expired" and "left" mean, once, as filters of entries (and, for the
hand-written statements, "unexpired" in SQL), by the database's clock: the start of the
statement, as Django's ``Now()`` reads it on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import F, Q, QuerySet
from django.db.models.functions import Coalesce, Now
from django.utils import timezone

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Entry

#: Not past its expiry (by the database's clock).
UNEXPIRED = Q(expires_at__isnull=True) | Q(expires_at__gt=Now())
#: Left the memory: evicted, expired, or live past its expiry.
RETIRED = Q(status__in=[Entry.Status.EVICTED, Entry.Status.EXPIRED]) | Q(
    status=Entry.Status.LIVE, expires_at__lte=Now()
)


def unexpired_sql(alias: str = "e", now: str = "statement_timestamp()") -> str:
    """:data:`UNEXPIRED` in SQL, for the rows of table ``alias`` of a statement, as of
    ``now`` (an SQL time: the statement's clock unless told)."""
    expiry = f"{alias}.expires_at" if alias else "expires_at"
    return f"({expiry} IS NULL OR {expiry} > {now})"


def unexpired(rows: QuerySet) -> QuerySet:
    return rows.filter(UNEXPIRED)


def expired_live(rows: QuerySet) -> QuerySet:
    """Live rows whose expiry passed: gone from every read, not yet marked expired."""
    return rows.filter(status=Entry.Status.LIVE, expires_at__lte=Now())


def retired(rows: QuerySet) -> QuerySet:
    """Rows that left the memory: evicted, expired, or live past their expiry."""
    return rows.filter(RETIRED)


def restorable(rows: QuerySet) -> QuerySet:
    """:func:`retired` rows that left within RETIRED_KEEP_DAYS, newest first."""
    since = timezone.now() - timedelta(days=business_settings.RETIRED_KEEP_DAYS)
    return (
        retired(rows)
        .annotate(left_at=Coalesce("retired_at", "expires_at"))
        .filter(left_at__gte=since)
        .order_by("-left_at", "key")
    )


def is_expired(entry: Entry, now=None) -> bool:
    """Past its expiry at ``now`` (the database's clock where a caller has read it)."""
    now = now or timezone.now()
    return entry.expires_at is not None and entry.expires_at <= now


def shown(rows: QuerySet) -> QuerySet:
    """Entries as pages and answers show them: the client's name read with the row, and
    without the columns no answer shows (the vector)."""
    return rows.defer("embedding").annotate(client_name=F("oauth_application__name"))
