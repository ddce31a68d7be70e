"""Promotion (SPEC 13): the account's confident shared entries go into its knowledge index.

An ``account``-layer entry with a confidence of at least PROMOTE_MIN_CONFIDENCE is promoted
by the write that made it so; a later write below that, a delete (its ``Promotion`` row
goes with it), an eviction or an expiry takes it out. With a broker the promotion is a task
after the commit: the write never waits for it and never fails because of it. Without one
(the default set-up) a store records its entry's promotion in its own transaction (one
statement in the write's round trip, :func:`in_write`: the two commit or roll back
together; should that statement fail, it alone is undone and the promotion is tried again
after the commit, so it never fails the write), and the other writes promote right after
the commit, where a failure is only logged.
``promotions_backfill`` (beat, every few minutes) repairs whatever a lost task or a
stopped worker left behind, and ``promotion_lag`` says how far behind the index is.

Knowledge search reads only promoted entries that still qualify, so an entry that stops
qualifying leaves the index at once, before its row here goes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from functools import cache
from typing import Any

from celery import current_app
from django.db import transaction
from django.db.models import Count, Exists, F, Min, OuterRef, QuerySet
from django.utils import timezone

from outreach.models import Account
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Entry, Layer, Promotion
from prospect_memory.business.records import PromotionLag
from prospect_memory.business.visibility import unexpired

logger = logging.getLogger(__name__)

TASK = "prospect_memory.business.tasks.promote_entries"


def qualifying(rows: QuerySet[Entry]) -> QuerySet[Entry]:
    """The ``rows`` that belong in the knowledge index: live, unexpired account entries of
    at least PROMOTE_MIN_CONFIDENCE whose text is not flagged (SPEC 15)."""
    return unexpired(
        rows.filter(
            layer=Layer.ACCOUNT,
            status=Entry.Status.LIVE,
            confidence__gte=business_settings.PROMOTE_MIN_CONFIDENCE,
            flagged_at__isnull=True,
        )
    )


def qualifies(entry: Entry) -> bool:
    """:func:`qualifying`, for an entry in hand."""
    return (
        entry.layer == Layer.ACCOUNT
        and entry.status == Entry.Status.LIVE
        and entry.confidence >= business_settings.PROMOTE_MIN_CONFIDENCE
        and entry.flagged_at is None
        and (entry.expires_at is None or entry.expires_at > timezone.now())
    )


def in_write(
    entry: Entry, *, only_if: tuple[str, list[Any]] | None = None
) -> tuple[str, list[Any]] | None:
    """Without a broker there is no background to promote in: a store records the
    promotion of the entry it writes (or takes it out) with its own rows, in its own
    transaction, as one statement, instead of after the commit on the caller's clock (a
    few ms of queries). With a broker, None: the task does it after the commit.

    ``only_if`` (an SQL condition and its parameters): the statement changes the index
    only if it holds, for a write sent before it is known to stand (``store_round_trip``)."""
    if not current_app.conf.task_always_eager:
        return None
    when, params = only_if or ("true", [])
    if qualifies(entry):
        return _promote_statement(when), [entry.pk, entry.account_id, entry.version, *params]
    return _remove_statement(when), [entry.pk, entry.account_id, *params]


@cache
def _promote_statement(when: str) -> str:
    table = Promotion._meta.db_table
    return f"""
    INSERT INTO {table} (entry_id, account_id, version, promoted_at)
    SELECT %s, %s, %s, statement_timestamp() WHERE {when}
    ON CONFLICT (entry_id) DO UPDATE
       SET version = excluded.version, promoted_at = excluded.promoted_at"""  # noqa: S608


@cache
def _remove_statement(when: str) -> str:
    table = Promotion._meta.db_table
    return f"DELETE FROM {table} WHERE entry_id = %s AND account_id = %s AND {when}"  # noqa: S608


def schedule(entries: Iterable[Entry]) -> None:
    """Bring the account entries among ``entries`` up to date in the index once the
    current transaction commits (a member's entries never go there)."""
    ids = [str(e.pk) for e in entries if e.layer == Layer.ACCOUNT]
    if ids:
        transaction.on_commit(lambda: _dispatch(ids), robust=True)


def _dispatch(ids: list[str]) -> None:
    if current_app.conf.task_always_eager:
        promote(ids)  # no broker: right after the commit, a few small statements
        return
    try:
        current_app.send_task(TASK, args=[ids], retry=False)
    except Exception:
        logger.warning("could not queue the promotion of %d entries; backfill will", len(ids))


def promote(entry_ids: Iterable[uuid.UUID | str]) -> dict[str, int]:
    """Put each entry in the index at its current version, or take it out."""
    counts = {"promoted": 0, "removed": 0, "current": 0}
    for entry_id in entry_ids:
        counts[_promote_one(entry_id)] += 1
    return counts


def _promote_one(entry_id: uuid.UUID | str) -> str:
    # Most writes change nothing in the index (an entry below the threshold, never promoted):
    # tell so without a lock, a transaction or a commit to wait for. A write after this
    # read schedules its own promotion.
    state = (
        Entry.objects.filter(pk=entry_id)
        .annotate(qualifies=Exists(qualifying(Entry.objects.filter(pk=OuterRef("pk")))))
        .values_list("version", "promotion__version", "qualifies")
        .first()
    )
    if state is None:
        return "current"
    version, promoted_version, qualifies = state
    if (not qualifies and promoted_version is None) or (qualifies and promoted_version == version):
        return "current"
    with transaction.atomic():
        # Locked against a concurrent write of the entry, so the index never keeps a state
        # older than the last write (that write schedules its own promotion after this).
        entry = (
            Entry.objects.select_for_update(no_key=True, of=("self",))
            .filter(pk=entry_id)
            .select_related("promotion")
            .first()
        )
        if entry is None:  # deleted: its promotion went with it
            return "current"
        promoted = getattr(entry, "promotion", None)
        if not qualifying(Entry.objects.filter(pk=entry.pk)).exists():
            if promoted is None:
                return "current"
            promoted.delete()
            return "removed"
        if promoted is not None and promoted.version == entry.version:
            return "current"
        Promotion.objects.update_or_create(
            entry=entry,
            defaults={
                "account_id": entry.account_id,
                "version": entry.version,
                "promoted_at": timezone.now(),
            },
        )
        return "promoted"


def _waiting(rows: QuerySet[Entry]) -> QuerySet[Entry]:
    """Entries that qualify but are not in the index at their current version."""
    return qualifying(rows).exclude(promotion__version=F("version"))


def _leaving(rows: QuerySet[Promotion], entries: QuerySet[Entry]) -> QuerySet[Promotion]:
    """Promotions among ``rows`` of entries (among ``entries``) that no longer qualify."""
    return rows.exclude(entry__in=qualifying(entries))


def promotions_backfill(*, limit: int = 1000) -> dict[str, int]:
    """Promote what qualifies but was missed, and drop what no longer qualifies."""
    waiting = list(_waiting(Entry.objects.all()).order_by("updated_at").values_list("pk")[:limit])
    leaving = list(
        _leaving(Promotion.objects.all(), Entry.objects.all()).values_list("entry_id")[:limit]
    )
    return promote([pk for (pk,) in waiting + leaving])


def promotion_lag(*, account: Account) -> PromotionLag:
    """How far the account's knowledge index is behind its business memory."""
    waiting = _waiting(Entry.objects.filter(account=account)).aggregate(
        count=Count("pk"), oldest=Min("updated_at")
    )
    leaving = _leaving(
        Promotion.objects.filter(account=account), Entry.objects.filter(account=account)
    ).count()
    return PromotionLag(waiting=waiting["count"], leaving=leaving, oldest_write=waiting["oldest"])
