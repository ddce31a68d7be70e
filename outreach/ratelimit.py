"""Rate limiting of writes per OAuth client, per account, in fixed one-minute windows.

Counted in PostgreSQL with one atomic upsert, so every web worker and every MCP or REST
request shares the same count. Reads are not limited here; the daily save quota and the
per-domain cap of prospect memory apply on top.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from outreach.access import Actor
from outreach.errors import KitError
from outreach.models import ClientRateWindow

WINDOW_SECONDS = 60


class RateLimited(KitError):
    code = "rate_limited"
    http_status = 429


def client_key(actor: Actor) -> str:
    if actor.oauth_application is not None:
        return f"app:{actor.oauth_application.pk}"
    if actor.member is not None:
        return f"member:{actor.member.pk}"
    return "staff"


def write_allowed(actor: Actor) -> None:
    """Count one write for the actor's client, or raise :class:`RateLimited`."""
    limit = getattr(settings, "KIT_WRITES_PER_MINUTE_PER_CLIENT", 60)
    if not limit or actor.is_staff:
        return
    now = timezone.now()
    window = now.replace(second=0, microsecond=0)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {ClientRateWindow._meta.db_table} AS w
                (account_id, client_key, window_start, count)
            VALUES (%s, %s, %s, 1)
            ON CONFLICT (account_id, client_key, window_start)
            DO UPDATE SET count = w.count + 1 WHERE w.count < %s
            RETURNING count
            """,  # noqa: S608  (table name from the model)
            [actor.account.pk, client_key(actor), window, limit],
        )
        allowed = cursor.fetchone() is not None
    if not allowed:
        retry = max(int((window + timedelta(seconds=WINDOW_SECONDS) - now).total_seconds()), 1)
        raise RateLimited(
            f"This client has made {limit} writes in the last minute, the most allowed. "
            f"Wait {retry} s and try again.",
            details={"limit_per_minute": limit, "retry_after_seconds": retry},
        )


def prune(*, older_than: timedelta = timedelta(hours=1)) -> int:
    deleted, _ = ClientRateWindow.objects.filter(
        window_start__lt=timezone.now() - older_than
    ).delete()
    return deleted
