"""The pages over every memory: memory health (each memory a registered section,
:mod:`prospect_memory.core.health`) and activity (each memory a registered source of
events, :mod:`prospect_memory.core.activity`), so the pages import none of them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_GET

from outreach.access import is_module_admin, require_module_admin
from outreach.pages import member_required
from prospect_memory.core.activity import Filters, activity, labels, sources, still_current
from prospect_memory.core.activity import clients as activity_clients
from prospect_memory.core.health import health_sections
from prospect_memory.core.integrity import readable


@require_GET
@member_required
def health_page(request):
    require_module_admin(request.actor)
    sections = health_sections(request.actor.account)
    return render(request, "prospect_memory/health.html", {"sections": sections})


#: Events a page of the activity page shows.
ACTIVITY_PAGE_SIZE = 50


@dataclass(frozen=True)
class Happened:
    """One row of the activity page."""

    at: datetime
    kind: str
    action: str
    subject: str
    layer: str
    version: int | None
    item: str
    who: str
    member_id: int | None
    client_id: int | None
    client_name: str | None
    event_id: int
    said: str
    #: Whether the item can still be opened as the event knew it.
    current: bool = True
    #: The oldest version of the item still kept (None: not versioned).
    oldest_kept: int | None = None

    def __post_init__(self) -> None:
        # Labels as readers receive stored text (a client's name, a former member's label).
        for name in ("who", "client_name", "subject"):
            text = getattr(self, name)
            if text:
                object.__setattr__(self, name, readable(text))

    @property
    def created(self) -> bool:
        return self.kind == "entries" and self.action == "store" and self.version == 1

    @property
    def changed_from(self) -> int | None:
        """The version this event's version replaced, when both are still kept (their
        changes are one page away)."""
        if not (self.kind == "entries" and self.action == "store" and (self.version or 0) > 1):
            return None
        if not self.current or self.oldest_kept is None or self.version - 1 < self.oldest_kept:
            return None
        return self.version - 1


def _whole(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


def _filters(query, kinds: list[str]) -> Filters:
    try:
        day = date.fromisoformat(query.get("day", "")) if query.get("day") else None
    except ValueError:
        day = None
    kind = query.get("kind") or None
    return Filters(
        member_id=_whole(query.get("member")),
        client_id=_whole(query.get("client")),
        kind=kind if kind in kinds else None,
        day=day,
    )


@require_GET
@member_required
def activity_page(request):
    """What people and agents changed, newest first: a module admin sees the account's
    (other members' own context aside), any other member their own context's."""
    actor = request.actor
    kinds = [source.kind for source in sources()]
    filters = _filters(request.GET, kinds)
    admin = is_module_admin(actor)
    if not admin:
        filters = Filters(client_id=filters.client_id, kind=filters.kind, day=filters.day)
    rows = activity(actor, filters)
    page = Paginator(rows if rows is not None else [], ACTIVITY_PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    said = labels()
    rows = list(page.object_list)
    current = still_current(actor, rows)
    happened = [
        Happened(
            *row,
            said=said.get((row[1], row[2]), row[2]),
            current=(row[1], row[6]) in current,
            oldest_kept=current.get((row[1], row[6])),
        )
        for row in rows
    ]
    members = (
        list(actor.account.members.select_related("user").order_by("user__username"))
        if admin
        else []
    )
    kept = request.GET.copy()
    kept.pop("page", None)
    return render(
        request,
        "prospect_memory/activity.html",
        {
            "page": page,
            "happened": happened,
            "filters": filters,
            "kinds": kinds,
            "members": members,
            "clients": activity_clients(actor),
            "admin": admin,
            "query": kept.urlencode(),
        },
    )
