"""Who may read and write which layer, and the entries an actor may reach.

Every lookup filters by the acting account, and a member's own layer by that member: an
entry elsewhere answers "not found", whether it exists or not."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from outreach.access import (
    MEMBER,
    MODULE_ADMIN,
    Actor,
    is_module_admin,
    require_module_admin,
    require_outreach,
)
from outreach.errors import NotModuleAdmin
from outreach.validation import FieldProblems
from prospect_memory.business.conf import business_settings
from prospect_memory.business.errors import NotFound
from prospect_memory.business.models import (
    Entry,
    Layer,
)
from prospect_memory.business.records import EntryView
from prospect_memory.business.rules import READ_LAYERS, clean_choice, clean_key
from prospect_memory.business.visibility import restorable, shown, unexpired
from prospect_memory.core.ids import uuid_or_none

WRITABLE_LAYERS = (Layer.ACCOUNT, Layer.MEMBER)


def may_write_layer(actor: Actor, layer: str) -> bool:
    """The account layer: an Outreach module admin; a member layer: its member (or Kit
    staff moderating in the admin)."""
    if layer == Layer.ACCOUNT:
        return is_module_admin(actor)
    return actor.member is not None or actor.is_staff


def require_layer_writer(actor: Actor, layer: str) -> None:
    if layer == Layer.ACCOUNT:
        require_module_admin(actor)
        return
    require_outreach(actor)
    if not may_write_layer(actor, layer):
        raise NotModuleAdmin(
            "A member's own context is written by that member only.",
            details={"layer": layer},
        )


def layer_role(layer: object) -> str:
    """The role a write to ``layer`` needs (for the operation's declaration)."""
    return MEMBER if layer == Layer.MEMBER else MODULE_ADMIN


@dataclass(frozen=True)
class Place:
    """One layer of one account's memory: the account's, or one member's."""

    account_id: int
    layer: str
    member_id: int | None

    @classmethod
    def of(cls, actor: Actor, layer: str) -> Place:
        """The actor's own place in ``layer``."""
        if layer == Layer.ACCOUNT:
            return cls(actor.account.pk, layer, None)
        if actor.member is None:
            raise NotModuleAdmin("Only a member has an own context.", details={"layer": layer})
        return cls(actor.account.pk, layer, actor.member.pk)

    @classmethod
    def of_entry(cls, entry: Entry) -> Place:
        return cls(entry.account_id, entry.layer, entry.member_id)


def read_layer(layer: object, problems: FieldProblems) -> str:
    return clean_choice(layer, READ_LAYERS, "layer", problems) or "merged"


def readable_layers(actor: Actor) -> Q:
    """The account layer, and the actor's own."""
    own = Q(layer=Layer.MEMBER, member=actor.member) if actor.member else Q(pk__in=[])
    return Q(layer=Layer.ACCOUNT) | own


def not_found(layer: str, key: str) -> NotFound:
    shown_key = key[: business_settings.KEY_MAX_CHARS]
    return NotFound(
        f"No {layer} entry {shown_key!r} in this account's business memory. List or search "
        "the memory to see its keys.",
        details={"layer": layer, "key": shown_key},
    )


def live_entries(actor: Actor, layer: str | None) -> QuerySet:
    """The live, unexpired entries ``actor`` may read in ``layer`` (None or ``merged``: both)."""
    rows = unexpired(Entry.objects.filter(account=actor.account, status=Entry.Status.LIVE))
    own = Q(layer=Layer.MEMBER, member=actor.member) if actor.member else Q(pk__in=[])
    if layer == Layer.ACCOUNT:
        return rows.filter(layer=Layer.ACCOUNT)
    if layer == Layer.MEMBER:
        return rows.filter(own)
    return rows.filter(Q(layer=Layer.ACCOUNT) | own)


def entry_for_actor(actor: Actor, *, layer: str, key: str) -> Entry:
    """A live, unexpired entry of ``layer`` the actor may read, or NotFound."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    if problems.fields:  # no entry has such a key
        raise not_found(layer, key)
    entry = shown(live_entries(actor, layer).filter(key=key)).first()
    if entry is None:
        raise not_found(layer, key)
    return entry


def merged_for_actor(actor: Actor, *, layer: str, key: str) -> Entry:
    """An entry of ``layer`` merged into another one, that the actor may read, or NotFound."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    rows = Entry.objects.filter(
        account=actor.account, layer=layer, status=Entry.Status.MERGED, key=key
    ).filter(readable_layers(actor))
    entry = None if problems.fields else shown(rows).select_related("alias_of").first()
    if entry is None:
        raise not_found(layer, key)
    return entry


def retired_for_actor(actor: Actor, entry_id: object, *, lock: bool = False) -> Entry:
    """An evicted or expired entry of a layer the actor may read, or NotFound."""
    pk = uuid_or_none(entry_id)
    readable = Q(layer=Layer.ACCOUNT)
    if actor.is_staff:
        readable = Q()  # staff moderate every layer of the account, in the admin
    elif actor.member is not None:
        readable |= Q(layer=Layer.MEMBER, member=actor.member)
    rows = restorable(Entry.objects.filter(readable, account=actor.account, pk=pk))
    if lock:
        rows = rows.select_for_update(of=("self",))
    entry = rows.first() if pk else None
    if entry is None:
        shown = str(entry_id)[:64]
        raise NotFound(
            f"No evicted or expired entry {shown!r} in this account. List the evictions to "
            "see their ids.",
            details={"entry_id": shown},
        )
    return entry


def aliases_of(actor: Actor, entry_id: str) -> list[EntryView]:
    """The entries consolidation merged into ``entry_id`` (one the actor may read)."""
    rows = Entry.objects.filter(
        account=actor.account, status=Entry.Status.MERGED, alias_of_id=entry_id
    ).filter(readable_layers(actor))
    return [EntryView.of(e) for e in shown(rows).order_by("key")]
