"""Where a layer's entries are, for the ORM and in SQL: a place (account, layer, member)
as a filter and as conditions with the layer a constant, and the prepared statements each
layer's writes read with."""

from __future__ import annotations

from functools import cache

from django.db.models import QuerySet

from prospect_memory.business.access import Place
from prospect_memory.business.models import (
    Entry,
    Layer,
    Shelf,
)
from prospect_memory.business.visibility import (
    unexpired_sql,
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


#: The entry columns a write reads back (all but the vector, which it replaces or keeps).
UNVECTORED = [f.attname for f in Entry._meta.concrete_fields if f.name != "embedding"]


@cache
def layer_statements(layer: str) -> dict[str, str]:
    """The statements of one layer, its conditions as constants: each matches the layer's
    own indexes, so PostgreSQL keeps one generic plan for it instead of planning each call."""
    table = Entry._meta.db_table
    shelf = Shelf._meta.db_table

    place, shelf_place = in_place_sql(layer, "e", named=True), in_place_sql(layer, "s", named=True)
    columns = ", ".join(f"e.{Entry._meta.get_field(name).column}" for name in UNVECTORED)
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    evicted, gone = Entry.Status.EVICTED.value, Entry.Status.EXPIRED.value
    unexpired = unexpired_sql()
    return {
        # One row at most between the two: a key is one live entry or one alias of its
        # layer. The live one is locked; an alias is not: no other writer changes it under
        # the shelf's lock, and the entry it stands for, which the store then locks, may
        # have the smaller id: searches lock in id order, so holding the alias first
        # while waiting for it would deadlock with one that saw the alias still live.
        "key": f"""
    SELECT {columns} FROM {table} e
     WHERE {place} AND e.key = %(key)s AND e.status = '{live}'
       FOR UPDATE OF e""",  # noqa: S608  (names from the models, values are parameters)
        "alias": f"""
    SELECT {columns} FROM {table} e
     WHERE {place} AND e.key = %(key)s AND e.status = '{merged}'""",  # noqa: S608
        # ``likely_target``: the key's live unexpired entry, or the one its alias stands for,
        # with the version of its row read and whether it is the key's own.
        "target": f"""
    WITH own AS (
        SELECT {columns}, e.xmin::text AS seen FROM {table} e
         WHERE {place} AND e.key = %(key)s AND e.status IN ('{live}', '{merged}')
           AND {unexpired})
    SELECT *, true FROM own WHERE status = '{live}'
     UNION ALL
    SELECT {columns}, e.xmin::text, false FROM {table} e JOIN own ON e.id = own.alias_of_id
     WHERE own.status = '{merged}' AND {place} AND e.status = '{live}' AND {unexpired}""",  # noqa: S608
        # ``make_room``'s two counts, as visibility.UNEXPIRED and RETIRED say (the few live
        # entries with an expiry from their own index, ``entry_expiring``), written back to
        # the shelf as the three it keeps.
        "counts": f"""
    WITH counted AS (
        SELECT (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}') AS live,
               (SELECT count(*) FROM {table} e
                 WHERE {place} AND e.status IN ('{evicted}', '{gone}')) AS gone,
               (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}'
                   AND e.expires_at IS NOT NULL) AS expiring,
               (SELECT count(*) FROM {table} e WHERE {place} AND e.status = '{live}'
                   AND e.expires_at <= statement_timestamp()) AS expired),
    written AS (
        UPDATE {shelf} s SET live_entries = c.live, left_entries = c.gone,
               expiring_entries = c.expiring
          FROM counted c WHERE {shelf_place})
    SELECT live - expired, gone + expired FROM counted""",  # noqa: S608  (names from the models)
    }


def in_place(place: Place) -> QuerySet[Entry]:
    return Entry.objects.filter(
        account_id=place.account_id, layer=place.layer, member_id=place.member_id
    )


def live_in(place: Place) -> QuerySet[Entry]:
    return in_place(place).filter(status=Entry.Status.LIVE)
