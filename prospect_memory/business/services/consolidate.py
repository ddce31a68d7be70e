"""Consolidation (SPEC 13): a periodic job that keeps an account's business memory small and
true. Per account, in order:

1. purge: entries that left (evicted or expired) over RETIRED_KEEP_DAYS ago are deleted;
2. demote: an entry neither read nor written for CONSOLIDATION_IDLE_DAYS loses
   CONSOLIDATION_DEMOTE_POINTS of confidence for each full idle period, never below 0,
   recorded as a version by "consolidation" (so it may leave the knowledge index);
3. merge: two live entries of one layer and category within the model's merge distance
   become one: the lower-confidence one turns into an alias of the other (its key then
   answers for that entry), its own value kept, and the merge can be undone;
4. record what it did (``ConsolidationRun``), shown on the memory health page.

Idempotent: each entry remembers how many idle periods it has been charged since its last
use, merged entries are no longer live, and purged ones are gone, so a second run changes
nothing. Every change happens under its layer's shelf lock, like any other write, and
prospect notes are never touched.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from outreach.models import Account
from prospect_memory.business.access import Place
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    CONSOLIDATION,
    ConsolidationRun,
    Entry,
    EntryEvent,
    Layer,
    Strategy,
)
from prospect_memory.business.records import Report
from prospect_memory.business.services import promotion
from prospect_memory.business.services.aliases import release_aliases
from prospect_memory.business.services.events import record_event
from prospect_memory.business.services.history import keep_version
from prospect_memory.business.services.lock import lock_shelf
from prospect_memory.business.services.places import in_place, live_in
from prospect_memory.business.visibility import retired, unexpired, unexpired_sql
from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings import get_provider


def consolidate(*, account: Account, dry_run: bool = False, now: datetime | None = None) -> Report:
    """Run the four steps for ``account`` (``dry_run``: say what would change, change
    nothing and record no run)."""
    now = now or timezone.now()
    report = Report(account=account.slug, dry_run=dry_run)
    started = timezone.now()
    report.purged_shared = retired_purge(
        now=now, account=account, layer=Layer.ACCOUNT, dry_run=dry_run
    )
    report.purged = report.purged_shared + retired_purge(
        now=now, account=account, layer=Layer.MEMBER, dry_run=dry_run
    )
    for place in _places(account):
        report.demoted += _demote(place, now, dry_run=dry_run)
    for place in _places(account):
        report.merged += _merge(place, now, dry_run=dry_run)
    if not dry_run:
        # The run report counts the shared layer: members' own contexts stay theirs.
        ConsolidationRun.objects.create(
            account=account,
            started_at=started,
            finished_at=timezone.now(),
            purged=report.purged_shared,
            demoted=sum(layer == Layer.ACCOUNT for _, layer, _, _ in report.demoted),
            merged=sum(layer == Layer.ACCOUNT for _, _, layer, _ in report.merged),
        )
    return report


def accounts_to_consolidate() -> QuerySet[Account]:
    """Accounts with any business memory to look after."""
    return Account.objects.filter(pk__in=Entry.objects.values("account_id").distinct()).order_by(
        "pk"
    )


def _places(account: Account) -> list[Place]:
    """Every layer of the account that holds live entries."""
    layers = (
        Entry.objects.filter(account=account, status=Entry.Status.LIVE)
        .values_list("layer", "member_id")
        .distinct()
        .order_by("layer", "member_id")
    )
    return [Place(account.pk, layer, member_id) for layer, member_id in layers]


#: What ``_version_by_consolidation`` changes on the entry.
_VERSION_FIELDS = [
    "version",
    "strategy",
    "written_by",
    "written_by_label",
    "oauth_application",
    "updated_at",
]


def _version_by_consolidation(entry: Entry, strategy: str, now: datetime) -> None:
    """Keep the entry as it was, and make the change a new version written by the job (a
    job's write is not a use: the idle time it measures goes on)."""
    keep_version(entry)
    entry.version += 1
    entry.strategy = strategy
    entry.written_by = None
    entry.written_by_label = CONSOLIDATION
    entry.oauth_application = None
    entry.updated_at = now


# --- 2. demote -------------------------------------------------------------------------------


def idle_periods(used_at: datetime, now: datetime) -> int:
    """Full CONSOLIDATION_IDLE_DAYS periods between a last use and ``now``."""
    period = timedelta(days=business_settings.CONSOLIDATION_IDLE_DAYS)
    return max(math.floor((now - used_at) / period), 0)


def _demote(place: Place, now: datetime, *, dry_run: bool) -> list[tuple[str, str, int, int]]:
    period = timedelta(days=business_settings.CONSOLIDATION_IDLE_DAYS)
    points = business_settings.CONSOLIDATION_DEMOTE_POINTS
    demoted = []
    with transaction.atomic():
        idle = unexpired(live_in(place)).filter(used_at__lte=now - period).order_by("id")
        if not dry_run:
            lock_shelf(place)
            # Rows locked in id order, as searches lock them; a read between the candidates
            # query and the write is then waited for and counted, never overwritten.
            idle = idle.select_for_update(no_key=True)
        for entry in idle:
            periods = idle_periods(entry.used_at, now)
            due = periods - entry.idle_periods_charged
            if due <= 0:
                continue
            before = entry.confidence
            after = max(before - points * due, 0)
            if after != before:
                demoted.append((entry.key, entry.layer, before, after))
            if dry_run:
                continue
            changed = ["idle_periods_charged"]
            if after != before:
                _version_by_consolidation(entry, Strategy.DEMOTE, now)
                entry.confidence = after
                changed += ["confidence", *_VERSION_FIELDS]
            entry.idle_periods_charged = periods
            entry.save(update_fields=changed)
            if after != before:
                record_event(CONSOLIDATION, EntryEvent.Action.DEMOTE, entry)
                promotion.schedule([entry])
    return demoted


# --- 3. merge --------------------------------------------------------------------------------


def _pairs(place: Place, model: str, distance: float) -> list[tuple[str, str, float]]:
    """Live entries of the layer within ``distance`` of each other, same category, nearest
    pairs first (one statement; a layer holds at most its capacity of entries)."""
    table = Entry._meta.db_table
    sql = f"""
    WITH live AS (
        SELECT id, category, kept_apart, flagged_at, embedding FROM {table}
         WHERE account_id = %(account)s AND layer = %(layer)s
           AND member_id IS NOT DISTINCT FROM %(member)s AND status = %(live)s
           AND {unexpired_sql("")}
           AND embedding_status = %(ready)s AND embedding_model = %(model)s
    )
    SELECT a.id::text, b.id::text, a.embedding <=> b.embedding AS distance
      FROM live a JOIN live b ON a.id < b.id AND a.category = b.category
     -- An entry whose merge a person undid stays apart (until it is written again); a
     -- flagged one is never merged (its key would answer for, or with, flagged text).
     WHERE NOT a.kept_apart AND NOT b.kept_apart
       AND a.flagged_at IS NULL AND b.flagged_at IS NULL
       AND a.embedding <=> b.embedding <= %(distance)s
     ORDER BY distance, a.id, b.id
    """  # noqa: S608  (names from the models, values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(
            sql,
            {
                "account": place.account_id,
                "layer": place.layer,
                "member": place.member_id,
                "live": Entry.Status.LIVE,
                "ready": embedding_pipeline.READY,
                "model": model,
                "distance": distance,
            },
        )
        found: list[tuple[str, str, float]] = cursor.fetchall()
        return found


def _keeps(a: Entry, b: Entry) -> tuple[Entry, Entry]:
    """Which of two entries stays (the other becomes its alias): the higher confidence,
    then the more used, then the older."""
    kept = min((a, b), key=lambda e: (-e.confidence, -e.access_count, e.created_at, e.key))
    return kept, (b if kept is a else a)


def _merge(place: Place, now: datetime, *, dry_run: bool) -> list[tuple[str, str, str, float]]:
    merged: list[tuple[str, str, str, float]] = []
    provider = get_provider()
    distance = business_settings.CONSOLIDATION_MERGE_DISTANCE
    if distance is None:
        distance = provider.thresholds.merge
    with transaction.atomic():
        if not dry_run:
            lock_shelf(place)
        pairs = _pairs(place, provider.model, distance)
        if not pairs:
            return merged
        ids = {i for a, b, _ in pairs for i in (a, b)}
        rows = Entry.objects.filter(pk__in=ids, status=Entry.Status.LIVE).order_by("id")
        if not dry_run:
            rows = rows.select_for_update(no_key=True)  # in id order, as searches lock
        entries = {str(e.pk): e for e in rows}
        # Nearest pairs first; an entry merged away takes no further part, while the one it
        # joined may take in more (or join another, its aliases with it): after one pass no
        # two live entries are within the distance, so a second run finds nothing to merge.
        gone: set[str] = set()
        for a, b, gap in pairs:
            if a in gone or b in gone or a not in entries or b not in entries:
                continue
            kept, alias = _keeps(entries[a], entries[b])
            gone.add(str(alias.pk))
            merged.append((alias.key, kept.key, place.layer, round(float(gap), 4)))
            if dry_run:
                continue
            # Entries that answered for the alias now answer for the entry it joins.
            Entry.objects.filter(alias_of=alias).update(alias_of=kept)
            _version_by_consolidation(alias, Strategy.MERGE, now)
            alias.status, alias.alias_of = Entry.Status.MERGED, kept
            alias.save(update_fields=["status", "alias_of", *_VERSION_FIELDS])
            record_event(CONSOLIDATION, EntryEvent.Action.MERGE, alias)
            promotion.schedule([alias])
    return merged


def retired_purge(
    *,
    now: datetime | None = None,
    account: Account | None = None,
    layer: str | None = None,
    dry_run: bool = False,
) -> int:
    """Delete what left the memory (evicted or expired) over RETIRED_KEEP_DAYS ago, in every
    account or one (and one layer); how many entries (``dry_run``: would be)."""
    since = (now or timezone.now()) - timedelta(days=business_settings.RETIRED_KEEP_DAYS)
    rows = Entry.objects.all() if account is None else Entry.objects.filter(account=account)
    if layer is not None:
        rows = rows.filter(layer=layer)
    rows = (
        retired(rows)
        .annotate(left_at=Coalesce("retired_at", "expires_at"))
        .filter(left_at__lt=since)
    )
    if dry_run:
        count: int = rows.count()
        return count
    places = rows.values_list("account_id", "layer", "member_id").order_by(
        "account_id", "layer", "member_id"
    )
    deleted = 0
    for place in [Place(*row) for row in places.distinct()]:
        # One layer at a time, locked as every writer locks it (the shelf, then rows in id
        # order): what a person restored or wrote meanwhile is read after they commit and no
        # longer qualifies, and a write that makes room never waits on the purge's rows.
        with transaction.atomic():
            lock_shelf(place)
            here = rows & in_place(place)
            leaving = list(here.select_for_update(of=("self",)).order_by("id"))
            # Expired entries never marked so still hold their aliases.
            release_aliases(
                [e for e in leaving if e.status == Entry.Status.LIVE], now or timezone.now()
            )
            _, counts = Entry.objects.filter(pk__in=[e.pk for e in leaving]).delete()
            deleted += counts.get(Entry._meta.label, 0)
    return deleted
