"""The prepared statements business memory's reads run (recall, list, search, the promoted
entries nearest a vector), built once from the models' tables, and the view an entry's row
becomes. Recall and search count the access in the same statement, so concurrent reads
never lose a count."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any

from django.db import connection
from oauth2_provider.models import get_application_model

from outreach.access import Actor
from pgstatements import literal
from prospect_memory.business.models import (
    Entry,
    Layer,
    Promotion,
)
from prospect_memory.business.records import (
    EntryView,
    Source,
)
from prospect_memory.business.visibility import unexpired_sql
from prospect_memory.core.crypto import Keyring, keyring, unseal
from prospect_memory.core.models import EmbeddedModel, flags_from_row

ENTRY_TABLE = Entry._meta.label_lower  # the binding of an entry's sealed value


#: Rows of the statements below: an entry's view in the first columns, then what the
#: statement adds (alias key, distance, when last seen) from this index on.
AFTER_VIEW = 21


def read_statements() -> dict[str, str]:
    """Recall, list and search as prepared statements, built once from the models' tables.

    Recall and search find the entries the actor may read and count the access in the same
    statement, so concurrent reads never lose a count; ``view_from_row`` reads the
    returned columns. Their counts commit without waiting for the disk, as a read's usage
    row does, except inside a caller's transaction: the setting would last to its end.
    """
    return _built(flushed=connection.in_atomic_block)


@cache
def _conditions() -> dict[str, str]:
    """The conditions the statements share: an entry the actor may read (``readable``),
    of the category asked (``in_category``), in the knowledge index (``promoted``)."""
    unexpired = unexpired_sql()
    return {
        "readable": f"""
           e.account_id = %(account)s AND e.status = %(live)s
           AND {unexpired}
           AND ((%(shared)s AND e.layer = %(account_layer)s)
                OR (e.layer = %(member_layer)s AND e.member_id = %(member)s))""",
        "in_category": "(%(category)s::text IS NULL OR e.category = %(category)s::text)",
        "promoted": f"""
           e.account_id = %(account)s AND e.status = %(live)s AND e.layer = %(account_layer)s
           AND {unexpired}
           AND e.confidence >= %(min_confidence)s AND e.flagged_at IS NULL""",
    }


@lru_cache(maxsize=16)
def uncompared_statements(model: str) -> dict[str, str]:
    """The counts of the entries a search (``not_compared``) or the knowledge index
    (``promoted_not_compared``) could not rank by ``model``'s vectors: not ready, or of
    another model. ``model`` is written into them, so that even a generic plan reaches those
    few rows through the partial indexes ``entry_account_backlog`` and
    ``entry_ready_model``, both by account, rather than reading every entry of the account
    (``NOT (ready AND model = %(model)s)`` did: a fifth of a search of 1,000), whatever
    backlog other accounts have."""
    entry, promotion = Entry._meta.db_table, Promotion._meta.db_table
    conditions = _conditions()
    ready, name = EmbeddedModel.EmbeddingStatus.READY.value, literal(model)
    # NOT (ready AND model = name) in the indexes' terms (both columns are NOT NULL).
    uncompared = f"""(e.embedding_status <> '{ready}' OR (e.embedding_status = '{ready}'
           AND (e.embedding_model < {name} OR e.embedding_model > {name})))"""
    return {
        "not_compared": f"""
    SELECT count(*) FROM {entry} e
     WHERE {conditions["readable"]} AND {conditions["in_category"]} AND {uncompared}
    """,  # noqa: S608  (names from the models, the model's name quoted, values are parameters)
        "promoted_not_compared": f"""
    SELECT count(*)
      FROM {entry} e JOIN {promotion} p ON p.entry_id = e.id AND p.account_id = e.account_id
     WHERE {conditions["promoted"]} AND {uncompared}
    """,  # noqa: S608  (names from the models, the model's name quoted, values are parameters)
    }


@cache
def _built(*, flushed: bool) -> dict[str, str]:
    entry = Entry._meta.db_table
    application = get_application_model()._meta.db_table
    unexpired = unexpired_sql()
    conditions = _conditions()
    readable, in_category = conditions["readable"], conditions["in_category"]
    promoted = conditions["promoted"]
    returned = f"""
           e.id::text, e.account_id, e.key, e.layer, e.value_ciphertext, e.category,
           e.confidence, e.source_pipeline_id, e.source_execution_id, e.source_step_id,
           e.source_extracted_at, e.version, e.created_at, e.updated_at, e.expires_at,
           e.access_count, e.last_accessed_at, e.written_by_label,
           (SELECT name FROM {application} WHERE id = e.oauth_application_id), e.written_at,
           e.integrity_ciphertext"""  # noqa: S608
    compared = "e.embedding_status = %(ready)s AND e.embedding_model = %(model)s"
    # A read is a use: it also resets the idle time consolidation demotes by. Its count
    # commits without waiting for the disk, as a read's usage row does (README, Decisions),
    # unless it is part of a caller's transaction (``flushed``).
    unflushed = "unflushed AS (SELECT set_config('synchronous_commit', 'off', true))"
    if flushed:
        unflushed = "unflushed AS (SELECT current_setting('synchronous_commit'))"
    counted = """access_count = e.access_count + 1, last_accessed_at = statement_timestamp(),
           used_at = statement_timestamp(), idle_periods_charged = 0"""
    promotion = Promotion._meta.db_table
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    account_layer, member_layer = Layer.ACCOUNT.value, Layer.MEMBER.value
    seen = "coalesce(e.last_accessed_at, e.created_at)"

    def ranked(layer: str) -> str:
        """One layer's live entries after the cursor, best first, a page at most."""
        return f"""
        SELECT e.id, e.confidence, {seen} AS seen
          FROM {entry} e
         WHERE e.account_id = %(account)s AND {layer} AND e.status = '{live}'
           AND {unexpired} AND {in_category}
           AND (%(c)s::int IS NULL OR e.confidence < %(c)s::int
                OR (e.confidence = %(c)s::int
                    AND ({seen} < %(t)s::timestamptz
                         OR ({seen} = %(t)s::timestamptz AND e.id > %(i)s::uuid))))
         ORDER BY e.confidence DESC, seen DESC, e.id
         LIMIT %(limit)s"""  # noqa: S608  (names from the models, values are parameters)

    return {
        # The member's own key wins over the account's (live or merged into another entry
        # of its layer by consolidation, when it answers for that entry, under the key asked).
        # Each layer's branch names its layer and statuses as constants, so it matches that
        # layer's unique index: PostgreSQL then keeps one generic plan for the statement
        # instead of planning it anew on every call (0.25 ms, more than it takes to run).
        "recall": f"""
    WITH {unflushed},
    found AS (
        SELECT coalesce(c.alias_of_id, c.id) AS id,
               CASE WHEN c.status = '{merged}' THEN c.key END AS alias_key
          FROM (SELECT e.id, e.alias_of_id, e.status, e.key, e.expires_at, 0 AS theirs
                  FROM {entry} e
                 WHERE e.account_id = %(account)s AND e.layer = '{member_layer}'
                   AND e.member_id = %(member)s AND e.key = %(key)s
                   AND e.status IN ('{live}', '{merged}')
                UNION ALL
                SELECT e.id, e.alias_of_id, e.status, e.key, e.expires_at, 1
                  FROM {entry} e
                 WHERE %(shared)s AND e.account_id = %(account)s
                   AND e.layer = '{account_layer}' AND e.key = %(key)s
                   AND e.status IN ('{live}', '{merged}')) c
         WHERE c.status = '{merged}' OR {unexpired_sql("c")}
         ORDER BY c.theirs, c.status = '{live}' DESC
         LIMIT 1
    )
    UPDATE {entry} e
       SET {counted}
      FROM found, unflushed
     WHERE e.id = found.id AND {readable}
    RETURNING {returned}, found.alias_key
    """,  # noqa: S608  (names from the models, values are parameters)
        "search": f"""
    WITH {unflushed}, ranked AS (
        SELECT e.id, e.embedding <=> %(vector)s::vector AS distance
          FROM {entry} e
         WHERE {readable} AND {in_category} AND {compared}
         ORDER BY distance, e.key
         LIMIT %(limit)s
    ), locked AS (
        -- Rows locked in one order (by id), so concurrent searches never deadlock.
        SELECT e.id, ranked.distance FROM {entry} e JOIN ranked ON ranked.id = e.id
         WHERE %(cutoff)s::float8 IS NULL OR ranked.distance <= %(cutoff)s
         ORDER BY e.id
           FOR NO KEY UPDATE OF e
    )
    UPDATE {entry} e
       SET {counted}
      FROM locked, unflushed
     WHERE e.id = locked.id AND {readable}
    RETURNING {returned}, locked.distance
    """,  # noqa: S608  (names from the models, values are parameters)
        # A page: each layer's branch walks its rank index (confidence first) and stops
        # after a page, sorting only ids and ranks; the whole rows are read for the page.
        "list": f"""
    WITH page AS (
        ({ranked(f"%(shared)s AND e.layer = '{account_layer}' AND e.member_id IS NULL")})
        UNION ALL
        ({ranked(f"e.layer = '{member_layer}' AND e.member_id = %(member)s")})
        ORDER BY confidence DESC, seen DESC, id
        LIMIT %(limit)s
    )
    SELECT {returned}, page.seen
      FROM page JOIN {entry} e ON e.id = page.id
     ORDER BY page.confidence DESC, page.seen DESC, page.id
    """,  # noqa: S608  (names from the models, values are parameters)
        # The knowledge index: promoted entries that still qualify (``promotion.qualifying``
        # says the same for the ORM).
        "promoted": f"""
    SELECT {returned}, e.embedding <=> %(vector)s::vector AS distance
      FROM {entry} e JOIN {promotion} p ON p.entry_id = e.id AND p.account_id = e.account_id
     WHERE {promoted} AND {compared}
     ORDER BY distance, e.key
     LIMIT %(limit)s
    """,  # noqa: S608  (names from the models, values are parameters)
    }


def readable(actor: Actor, layer: str) -> dict[str, object]:
    """The parameters of the statements' ``readable`` condition for ``layer``."""
    member = actor.member.pk if actor.member else None
    return {
        "account": actor.account.pk,
        "live": Entry.Status.LIVE,
        "shared": layer in ("merged", Layer.ACCOUNT),
        "account_layer": Layer.ACCOUNT,
        "member_layer": Layer.MEMBER,
        "member": member if layer in ("merged", Layer.MEMBER) else None,
    }


def view_from_row(row: tuple[Any, ...], ring: Keyring | None = None) -> EntryView:
    (entry_id, account_id, key, layer, token, category, confidence, pipeline_id, execution_id,
     step_id, extracted_at, version, created_at, updated_at, expires_at, access_count,
     last_accessed_at, written_by, client, written_at,
     integrity_token) = row[:AFTER_VIEW]  # fmt: skip
    ring = ring or keyring()
    where = {"table": ENTRY_TABLE, "account_id": account_id, "row_id": entry_id, "ring": ring}
    text = unseal(token, field="value_json", **where)
    flags = flags_from_row(integrity_token, **where)
    return EntryView(
        id=entry_id,
        key=key,
        layer=layer,
        value_json=text,
        category=category,
        confidence=confidence,
        source=Source(pipeline_id, execution_id, step_id, extracted_at),
        version=version,
        created_at=created_at,
        updated_at=updated_at,
        expires_at=expires_at,
        access_count=access_count,
        last_accessed_at=last_accessed_at,
        written_by=written_by,
        oauth_client=client,
        written_at=written_at,
        flags=flags,
    )
