"""Rate limits counted in PostgreSQL, in fixed windows, shared by every web worker.

- Writes per member per OAuth client per account per minute: a member's refused or
  rejected writes can never spend another member's budget, and a write is counted only
  once it has passed the scope, add-on, subscription and role checks.
- Client registrations per address per hour: anonymous registration stays open (MCP
  clients register themselves) without letting one address fill the client table.

Each limit is one atomic upsert (:func:`pgstatements.rows.take_slot`). Reads are not limited
here; the quotas of the memories apply on top.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from outreach.access import Actor
from outreach.errors import KitError
from outreach.models import AddressRateWindow, ClientRateWindow
from pgstatements import take_slot

WRITE_WINDOW = timedelta(minutes=1)
REGISTRATION_WINDOW = timedelta(hours=1)


class RateLimited(KitError):
    code = "rate_limited"
    http_status = 429


def _window(now: datetime, length: timedelta) -> datetime:
    seconds = int(length.total_seconds())
    epoch = int(now.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=now.tzinfo)


def _retry_after(window: datetime, length: timedelta, now: datetime) -> int:
    return max(int((window + length - now).total_seconds()), 1)


def write_budget_key(actor: Actor) -> str:
    """The write budget's key: the member and the client they write through."""
    member = f"member:{actor.member.pk}"
    if actor.oauth_application is not None:
        return f"{member}:app:{actor.oauth_application.pk}"
    return f"{member}:web"


def write_allowed(actor: Actor) -> None:
    """Count one write for the actor's member and client, or raise :class:`RateLimited`."""
    limit = settings.KIT_WRITES_PER_MINUTE_PER_CLIENT
    if not limit or actor.member is None:
        return  # off, or Kit staff moderating in the admin
    now = timezone.now()
    window = _window(now, WRITE_WINDOW)
    taken = take_slot(
        ClientRateWindow,
        key={
            "account": actor.account.pk,
            "client_key": write_budget_key(actor),
            "window_start": window,
        },
        counter="count",
        limit=limit,
    )
    if taken is None:
        retry = _retry_after(window, WRITE_WINDOW, now)
        raise RateLimited(
            f"You have made {limit} writes through this client in the last minute, the most "
            f"allowed. Wait {retry} s and try again.",
            details={"limit_per_minute": limit, "retry_after_seconds": retry},
        )


def registration_allowed(address: str) -> int | None:
    """Count one client registration from ``address`` (an address bucket, see
    ``outreach.addresses``); None if allowed, else the seconds to wait."""
    limit = settings.KIT_CLIENT_REGISTRATIONS_PER_HOUR
    if not limit:
        return None
    now = timezone.now()
    window = _window(now, REGISTRATION_WINDOW)
    taken = take_slot(
        AddressRateWindow,
        key={
            "action": "register_client",
            "address": address[:64] or "unknown",
            "window_start": window,
        },
        counter="count",
        limit=limit,
    )
    return None if taken is not None else _retry_after(window, REGISTRATION_WINDOW, now)


def prune(*, older_than: timedelta = timedelta(hours=2)) -> int:
    cutoff = timezone.now() - older_than
    deleted, _ = ClientRateWindow.objects.filter(window_start__lt=cutoff).delete()
    more, _ = AddressRateWindow.objects.filter(window_start__lt=cutoff).delete()
    return deleted + more
