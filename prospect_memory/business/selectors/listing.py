"""Lists of entries: the live ones a page at a time (not counted as access), the ones that
left and can be restored, and whether a key was deleted from a layer."""

from __future__ import annotations

from django.core import signing

from outreach.access import Actor
from outreach.validation import FieldProblems
from pgstatements import run_one
from prospect_memory.business.access import read_layer
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    Layer,
)
from prospect_memory.business.records import (
    EntryView,
    Page,
)
from prospect_memory.business.rules import (
    capacity,
    clean_category,
    clean_choice,
    clean_limit,
)
from prospect_memory.business.selectors.statements import (
    AFTER_VIEW,
    read_statements,
    readable,
    view_from_row,
)
from prospect_memory.business.visibility import restorable, shown
from prospect_memory.core.crypto import keyring

_CURSOR_SALT = "business-memory-list"


def entries_list(
    *,
    actor: Actor,
    layer: object = "merged",
    category: object = None,
    limit: object = None,
    cursor: object = None,
) -> Page:
    """Entries by confidence, then last use (never read: since stored), a page at a time.

    Not counted as access. A cursor is a position in that order: an entry read or
    re-scored between pages can move past it.
    """
    problems = FieldProblems()
    layer = read_layer(layer, problems)
    category = clean_category(category, problems)
    count = clean_limit(
        limit,
        default=business_settings.LIST_LIMIT_DEFAULT,
        most=business_settings.LIST_LIMIT_MAX,
        problems=problems,
    )
    position = None
    filters = {"layer": layer, "category": category}
    if cursor is not None:
        try:
            position = signing.loads(str(cursor), salt=_CURSOR_SALT)
            if position.get("filters") != filters:
                raise signing.BadSignature("another list")
        except (signing.BadSignature, AttributeError):
            problems.add("cursor", "cursor is not one this list gave; start without a cursor")
    problems.raise_if_any()
    after = position or {}
    rows = run_one(
        read_statements()["list"],
        {
            **readable(actor, layer),
            "category": category,
            "c": after.get("c"),
            "t": after.get("t"),
            "i": after.get("i"),
            "limit": count + 1,
        },
        replica=True,  # a list counts no access: a replica may answer it
    )
    more = len(rows) > count
    rows = rows[:count]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = signing.dumps(
            {
                "c": last[6],  # confidence
                "t": last[AFTER_VIEW].isoformat(),  # seen
                "i": last[0],  # id
                "filters": filters,
            },
            salt=_CURSOR_SALT,
        )
    ring = keyring()
    return Page(entries=[view_from_row(row, ring) for row in rows], next_cursor=next_cursor)


def evictions_list(*, actor: Actor, layer: object = Layer.ACCOUNT) -> list[EntryView]:
    """Entries of ``layer`` that left the memory (evicted or expired) within
    RETIRED_KEEP_DAYS and can be restored, newest first (at most the layer's capacity)."""
    problems = FieldProblems()
    layer = clean_choice(layer, (Layer.ACCOUNT, Layer.MEMBER), "layer", problems)
    problems.raise_if_any()
    rows = Entry.objects.filter(account=actor.account, layer=layer)
    if layer == Layer.MEMBER:
        rows = rows.filter(member=actor.member) if actor.member else rows.none()
    return [EntryView.of(e) for e in shown(restorable(rows))[: capacity(layer)]]


def key_deleted_in_layer(actor: Actor, layer: str, key: str) -> bool:
    """Whether an entry of ``key`` was in this layer (it went since): only then is an edit
    of it a change someone overtook, rather than an address that never led anywhere."""
    events = EntryEvent.objects.filter(
        account=actor.account, layer=layer, key=key.lower(), action=EntryEvent.Action.DELETE
    )
    if layer == Layer.MEMBER:
        events = events.filter(member=actor.member) if actor.member else events.none()
    return events.exists()
