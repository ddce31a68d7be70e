"""Reads of business memory. Every query filters by the acting account, and a member layer
by the acting member: no one else (not another member, not an admin's token, not staff)
reads, counts or ranks a member's own context.

Expired entries disappear from every read at once (``expires_at`` is compared with the
database's clock in the query); evicted and expired entries only appear in the evictions
list, for restore."""

from __future__ import annotations

from functools import cache

from django.core import signing
from django.db import connection
from django.db.models import Q
from oauth2_provider.models import get_application_model

from outreach.access import Actor
from outreach.validation import FieldProblems
from pgstatements import run, run_one, vector_param
from prospect_memory.business.access import entry_for_actor, live_entries, read_layer
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Promotion,
)
from prospect_memory.business.records import (
    EntryView,
    NearEntries,
    Page,
    Recall,
    Search,
    SearchResult,
    Source,
    VersionView,
    source_of,
)
from prospect_memory.business.rules import (
    capacity,
    clean_category,
    clean_choice,
    clean_key,
)
from prospect_memory.business.visibility import restorable, shown, unexpired_sql
from prospect_memory.core.crypto import keyring, unseal
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.core.models import EmbeddedModel, flags_from_row

ENTRY_TABLE = Entry._meta.label_lower  # the binding of an entry's sealed value


#: Rows of the statements below: an entry's view in the first columns, then what the
#: statement adds (alias key, distance, when last seen) from this index on.
_AFTER_VIEW = 21


def _statements() -> dict[str, str]:
    """Recall, list and search as prepared statements, built once from the models' tables.

    Recall and search find the entries the actor may read and count the access in the same
    statement, so concurrent reads never lose a count; ``_view_from_row`` reads the
    returned columns. Their counts commit without waiting for the disk, as a read's usage
    row does, except inside a caller's transaction: the setting would last to its end.
    """
    return _built(flushed=connection.in_atomic_block)


@cache
def _built(*, flushed: bool) -> dict[str, str]:
    entry = Entry._meta.db_table
    application = get_application_model()._meta.db_table
    unexpired = unexpired_sql()
    readable = f"""
           e.account_id = %(account)s AND e.status = %(live)s
           AND {unexpired}
           AND ((%(shared)s AND e.layer = %(account_layer)s)
                OR (e.layer = %(member_layer)s AND e.member_id = %(member)s))"""
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
    promoted = f"""
           e.account_id = %(account)s AND e.status = %(live)s AND e.layer = %(account_layer)s
           AND {unexpired}
           AND e.confidence >= %(min_confidence)s AND e.flagged_at IS NULL"""
    live, merged = Entry.Status.LIVE.value, Entry.Status.MERGED.value
    account_layer, member_layer = Layer.ACCOUNT.value, Layer.MEMBER.value
    in_category = "(%(category)s::text IS NULL OR e.category = %(category)s::text)"
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
        "not_compared": f"""
    SELECT count(*) FROM {entry} e
     WHERE {readable} AND {in_category} AND NOT ({compared})
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
        "promoted_not_compared": f"""
    SELECT count(*)
      FROM {entry} e JOIN {promotion} p ON p.entry_id = e.id AND p.account_id = e.account_id
     WHERE {promoted} AND NOT ({compared})
    """,  # noqa: S608  (names from the models, values are parameters)
    }


def _readable(actor: Actor, layer: str) -> dict:
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


def entry_recall(
    *, actor: Actor, key: object, layer: object = "merged", include_history: bool = False
) -> Recall:
    """One entry by key (``merged``: the member's wins), counting the access."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    layer = read_layer(layer, problems)
    problems.raise_if_any()
    rows = run_one(_statements()["recall"], {**_readable(actor, layer), "key": key})
    if not rows:
        return Recall(found=False, history=[] if include_history else None)
    alias = rows[0][_AFTER_VIEW]
    view = _view_from_row(rows[0])
    if alias is not None:  # answered under the key asked, saying which entry it stands for
        view.alias_of, view.key = view.key, alias
    history = entry_history_views(actor, view.id) if include_history else None
    return Recall(found=True, entry=view, history=history)


def _view_from_row(row: tuple, ring=None) -> EntryView:
    (entry_id, account_id, key, layer, token, category, confidence, pipeline_id, execution_id,
     step_id, extracted_at, version, created_at, updated_at, expires_at, access_count,
     last_accessed_at, written_by, client, written_at,
     integrity_token) = row[:_AFTER_VIEW]  # fmt: skip
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


def entry_history_views(
    actor: Actor, entry_id: str, *, only: tuple[int, ...] | None = None
) -> list[VersionView]:
    """An entry's kept versions, newest first (``only``: just those)."""
    versions = (
        EntryVersion.objects.filter(account=actor.account, entry_id=entry_id)
        .select_related("oauth_application")
        .order_by("-version")
    )
    if only is not None:
        versions = versions.filter(version__in=only)
    return [
        VersionView(
            version=v.version,
            value_json=v.value_json,
            category=v.category,
            confidence=v.confidence,
            source=source_of(v),
            strategy=v.strategy,
            written_by=v.written_by_label,
            oauth_client=v.oauth_application.name if v.oauth_application_id else None,
            written_at=v.written_at,
            flags=v.flags,
        )
        for v in versions
    ]


def entry_history(*, actor: Actor, key: object, layer: object = Layer.ACCOUNT):
    """An entry and its kept versions, newest first (no access is counted)."""
    problems = FieldProblems()
    key = clean_key(key, problems)
    layer = clean_choice(layer, (Layer.ACCOUNT, Layer.MEMBER), "layer", problems)
    problems.raise_if_any()
    entry = entry_for_actor(actor, layer=layer, key=key)
    return EntryView.of(entry), entry_history_views(actor, str(entry.pk))


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
    limit_max = business_settings.LIST_LIMIT_MAX
    if limit is None:
        limit = business_settings.LIST_LIMIT_DEFAULT
    elif isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= limit_max:
        problems.add("limit", f"limit must be a whole number from 1 to {limit_max}")
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
        _statements()["list"],
        {
            **_readable(actor, layer),
            "category": category,
            "c": after.get("c"),
            "t": after.get("t"),
            "i": after.get("i"),
            "limit": limit + 1,
        },
    )
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = signing.dumps(
            {
                "c": last[6],  # confidence
                "t": last[_AFTER_VIEW].isoformat(),  # seen
                "i": last[0],  # id
                "filters": filters,
            },
            salt=_CURSOR_SALT,
        )
    ring = keyring()
    return Page(entries=[_view_from_row(row, ring) for row in rows], next_cursor=next_cursor)


def entries_search(
    *,
    actor: Actor,
    query: object,
    layer: object = "merged",
    category: object = None,
    limit: object = None,
) -> Search:
    """Entries ranked by meaning (cosine distance), each counted as an access in the ranking
    statement. Entries matched on their key instead (``distance`` None) are not counted
    here: the caller that shows them counts them (:func:`~.usage.entries_used`)."""
    problems = FieldProblems()
    layer = read_layer(layer, problems)
    max_chars = business_settings.SEARCH_QUERY_MAX_CHARS
    if not isinstance(query, str) or not query.strip() or len(query) > max_chars:
        problems.add("query", f"query must be text of 1 to {max_chars:,} characters")
    elif "\x00" in query:
        problems.add("query", "query may not contain NUL characters")
    limit_max = business_settings.SEARCH_LIMIT_MAX
    if limit is None:
        limit = limit_max
    elif isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= limit_max:
        problems.add("limit", f"limit must be a whole number from 1 to {limit_max}")
    category = clean_category(category, problems)
    problems.raise_if_any()
    embedded = embed_within_budget(query.strip(), query=True)
    result = Search(problem=embedded.problem)
    params = {
        **_readable(actor, layer),
        "category": category,
        "ready": EmbeddedModel.EmbeddingStatus.READY,
        "model": embedded.model,
    }
    if embedded.vector is not None:
        statements = _statements()
        ranked, ((not_compared,),) = run(
            (
                statements["search"],
                {
                    **params,
                    "vector": vector_param(embedded.vector),
                    "limit": limit,
                    "cutoff": business_settings.SEARCH_MAX_DISTANCE,
                },
            ),
            (statements["not_compared"], params),
        )
        ring = keyring()
        for row in sorted(ranked, key=lambda r: (r[_AFTER_VIEW], r[2])):
            result.results.append(SearchResult(_view_from_row(row, ring), float(row[_AFTER_VIEW])))
        result.not_compared = not_compared
    else:
        result.not_compared = _uncompared(actor, layer, category, None).count()
    words = {w for w in query.lower().replace("_", " ").split() if len(w) >= 2}
    if result.not_compared and words and len(result.results) < limit:
        key_match = Q()
        for word in sorted(words)[:10]:
            key_match |= Q(key__icontains=word)
        compared = embedded.model if embedded.vector is not None else None
        fallback = shown(_uncompared(actor, layer, category, compared)).filter(key_match)
        for entry in fallback.order_by("-confidence", "key")[: limit - len(result.results)]:
            result.results.append(SearchResult(EntryView.of(entry), None))
    return result


def _uncompared(actor: Actor, layer: str, category: str | None, model: str | None):
    """The live entries a search of ``layer`` (and ``category``) could not rank by meaning:
    without a query vector (``model`` None) all of them, else those without a vector of
    ``model``. Built only when a search needs them: most find every entry compared."""
    rows = live_entries(actor, layer)
    if category is not None:
        rows = rows.filter(category=category)
    if model is None:
        return rows
    return rows.exclude(embedding_status=EmbeddedModel.EmbeddingStatus.READY, embedding_model=model)


def promoted_nearest(
    *, actor: Actor, vector: list[float] | None, model: str, limit: int
) -> NearEntries:
    """The account's promoted entries (SPEC 13) nearest ``vector``, not counted as a use
    (the caller counts the ones it shows, with :func:`~.usage.entries_used`); without a vector,
    none, and every promoted entry counted as not compared."""
    statements = _statements()
    params = {
        "account": actor.account.pk,
        "live": Entry.Status.LIVE,
        "account_layer": Layer.ACCOUNT,
        "min_confidence": business_settings.PROMOTE_MIN_CONFIDENCE,
        "ready": EmbeddedModel.EmbeddingStatus.READY,
        "model": model if vector is not None else "",
    }
    if vector is None:
        ((count,),) = run_one(statements["promoted_not_compared"], params)
        return NearEntries(found=[], not_compared=count)
    rows, ((count,),) = run(
        (
            statements["promoted"],
            {**params, "vector": vector_param(vector), "limit": limit},
        ),
        (statements["promoted_not_compared"], params),
    )
    ring = keyring()
    found = [(_view_from_row(row, ring), float(row[_AFTER_VIEW])) for row in rows]
    return NearEntries(found=found, not_compared=count)


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
