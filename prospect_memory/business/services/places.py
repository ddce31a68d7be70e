"""Where a layer's entries are, for the ORM and in SQL: a place (account, layer, member)
as a filter, and as conditions with the layer a constant."""

from __future__ import annotations

from django.db.models import QuerySet

from prospect_memory.business.access import Place
from prospect_memory.business.models import (
    Entry,
    Layer,
)


def in_place_sql(layer: str, alias: str, *, named: bool = False) -> str:
    """The rows of a place of ``layer`` in table ``alias`` (none: the statement's one
    table), the layer a constant; its parameters positional (:func:`place_params`), or
    ``named`` (``account``, ``member``)."""
    table = f"{alias}." if alias else ""
    account, member = ("%(account)s", "%(member)s") if named else ("%s", "%s")
    owner = "IS NULL" if layer == Layer.ACCOUNT else f"= {member}"
    return (
        f"{table}account_id = {account} AND {table}layer = '{Layer(layer).value}' "
        f"AND {table}member_id {owner}"
    )


def place_params(place: Place) -> list[object]:
    """The parameters of :func:`in_place_sql` for ``place``."""
    if place.layer == Layer.ACCOUNT:
        return [place.account_id]
    return [place.account_id, place.member_id]


def in_place(place: Place) -> QuerySet[Entry]:
    rows = Entry.objects.filter(account_id=place.account_id, layer=place.layer)
    if place.member_id is None:
        return rows.filter(member__isnull=True)
    return rows.filter(member_id=place.member_id)


def live_in(place: Place) -> QuerySet[Entry]:
    return in_place(place).filter(status=Entry.Status.LIVE)
