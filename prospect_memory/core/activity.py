"""What people and agents changed in an account's memories, newest first (the activity page).

Each memory registers a source at ``ready()``: the events it keeps (the notes' audit
events, business memory's entry events), as rows of the same columns, already narrowed to
what the viewer may see. The page reads them as one ``UNION ALL``, ordered and paginated in
the database, so a page costs the same few queries however many events there are.

Who sees what: a module admin sees the account's activity, except other members' own
context; any other member sees the activity of their own context only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone

from outreach.access import Actor
from outreach.characters import readable

#: The columns every source's rows have, in this order.
COLUMNS = (
    "at",
    "kind",
    "action",
    "subject",
    "layer",
    "version",
    "item",
    "who",
    "member_id",
    "client_id",
    "client_name",
    "event_id",
)


@dataclass(frozen=True)
class Filters:
    member_id: int | None = None
    client_id: int | None = None
    kind: str | None = None
    day: date | None = None

    def window(self) -> tuple[datetime, datetime | None] | None:
        if self.day is None:
            return None
        start = timezone.make_aware(datetime.combine(self.day, time.min))
        if self.day == date.max:
            return start, None
        return start, start + timedelta(days=1)


@dataclass(frozen=True)
class Source:
    #: What the rows are about ("notes", "entries"): the kind filter's choices.
    kind: str
    #: The events ``actor`` may see (an event model's queryset).
    events: Callable[[Actor], models.QuerySet]
    #: Those events as ``COLUMNS`` (see :func:`columns`).
    shape: Callable[[models.QuerySet], models.QuerySet]
    #: Action -> how the page says it.
    labels: dict[str, str]
    #: Of the page's ``item`` values, those whose item can still be opened as the event
    #: knew it, each with the oldest version of it still kept (None: not versioned), in one
    #: query; None when every item can be opened.
    current: Callable[[Actor, list[str]], dict[str, int | None]] | None = None


_sources: dict[str, Source] = {}


def register_activity_source(source: Source) -> None:
    _sources[source.kind] = source


def sources() -> list[Source]:
    return list(_sources.values())


def columns(rows: models.QuerySet, *, kind: str, **expressions) -> models.QuerySet:
    """``rows`` (an event model's) as the activity columns: ``expressions`` give those of
    ``subject``, ``layer``, ``version`` and ``item`` the model has no field for; who and when
    are the event base's."""
    return rows.annotate(
        at=models.F("created_at"),
        kind=models.Value(kind, output_field=models.CharField()),
        who=models.F("actor"),
        client_id=models.F("oauth_application_id"),
        client_name=models.F("oauth_application__name"),
        event_id=models.F("id"),
        **{
            name: expression if name != "item" else Cast(expression, models.CharField())
            for name, expression in expressions.items()
        },
    ).values_list(*COLUMNS)


def _narrowed(rows: models.QuerySet, filters: Filters) -> models.QuerySet:
    if filters.member_id is not None:
        rows = rows.filter(member_id=filters.member_id)
    if filters.client_id is not None:
        rows = rows.filter(oauth_application_id=filters.client_id)
    window = filters.window()
    if window is not None:
        rows = rows.filter(created_at__gte=window[0])
        if window[1] is not None:
            rows = rows.filter(created_at__lt=window[1])
    return rows


def activity(actor: Actor, filters: Filters) -> models.QuerySet | None:
    """Every event ``actor`` may see that ``filters`` keep, newest first, as one query
    (rows of ``COLUMNS``); None when no source is asked for."""
    chosen = [s for s in _sources.values() if filters.kind in (None, s.kind)]
    if not chosen:
        return None
    first, *rest = (s.shape(_narrowed(s.events(actor), filters)) for s in chosen)
    union = first.union(*rest, all=True) if rest else first
    return union.order_by("-at", "kind", "-event_id")


def clients(actor: Actor) -> list[tuple[int, str]]:
    """The OAuth clients named by the events ``actor`` may see, by name (one query)."""
    first, *rest = (
        s.events(actor)
        .exclude(oauth_application=None)
        .order_by()
        .values_list("oauth_application_id", "oauth_application__name")
        .distinct()
        for s in _sources.values()
    )
    found = [(pk, readable(name)) for pk, name in (first.union(*rest) if rest else first)]
    return sorted(found, key=lambda row: (row[1].casefold(), row[0]))


def still_current(actor: Actor, rows: list[tuple]) -> dict[tuple[str, str], int | None]:
    """The ``(kind, item)`` of ``rows`` whose item can still be opened, with the oldest
    version of it still kept: a link to an entry deleted since, to another entry created
    later under the same key, or to a version no longer kept, would mislead."""
    kind_at, item_at = COLUMNS.index("kind"), COLUMNS.index("item")
    found: dict[tuple[str, str], int | None] = {}
    for source in _sources.values():
        items = sorted({row[item_at] for row in rows if row[kind_at] == source.kind} - {None})
        if source.current is None:
            found.update(((source.kind, item), None) for item in items)
        elif items:
            kept = source.current(actor, items)
            found.update(((source.kind, item), oldest) for item, oldest in kept.items())
    return found


def labels() -> dict[tuple[str, str], str]:
    return {
        (source.kind, action): label
        for source in _sources.values()
        for action, label in source.labels.items()
    }
