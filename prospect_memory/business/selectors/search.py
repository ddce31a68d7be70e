"""Search by meaning: an actor's entries ranked by cosine distance (each counted as an access),
keys matched by words where no vector could be compared, and the account's promoted entries
nearest a vector for knowledge search."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from outreach.access import Actor
from outreach.validation import FieldProblems
from pgstatements import run, run_one, vector_param
from prospect_memory.business.access import live_entries, read_layer
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Entry,
    Layer,
)
from prospect_memory.business.records import (
    EntryView,
    NearEntries,
    Search,
    SearchResult,
)
from prospect_memory.business.rules import clean_category, clean_limit
from prospect_memory.business.selectors.statements import (
    AFTER_VIEW,
    read_statements,
    readable,
    uncompared_statements,
    view_from_row,
)
from prospect_memory.business.visibility import shown
from prospect_memory.core.crypto import keyring
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.core.models import EmbeddedModel


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
    text = query if isinstance(query, str) else ""
    if not text.strip() or len(text) > max_chars:
        problems.add("query", f"query must be text of 1 to {max_chars:,} characters")
    elif "\x00" in text:
        problems.add("query", "query may not contain NUL characters")
    most = business_settings.SEARCH_LIMIT_MAX
    count = clean_limit(limit, default=most, most=most, problems=problems)
    category = clean_category(category, problems)
    problems.raise_if_any()
    embedded = embed_within_budget(text.strip(), query=True)
    result = Search(problem=embedded.problem)
    params = {
        **readable(actor, layer),
        "category": category,
        "ready": EmbeddedModel.EmbeddingStatus.READY,
        "model": embedded.model,
    }
    if embedded.vector is not None:
        statements = read_statements()
        ranked, ((not_compared,),) = run(
            (
                statements["search"],
                {
                    **params,
                    "vector": vector_param(embedded.vector),
                    "limit": count,
                    "cutoff": business_settings.SEARCH_MAX_DISTANCE,
                },
            ),
            (uncompared_statements(embedded.model)["not_compared"], params),
        )
        ring = keyring()
        for row in sorted(ranked, key=lambda r: (r[AFTER_VIEW], r[2])):
            result.results.append(SearchResult(view_from_row(row, ring), float(row[AFTER_VIEW])))
        result.not_compared = not_compared
    else:
        result.not_compared = _uncompared(actor, layer, category, None).count()
    words = {w for w in text.lower().replace("_", " ").split() if len(w) >= 2}
    if result.not_compared and words and len(result.results) < count:
        key_match = Q()
        for word in sorted(words)[:10]:
            key_match |= Q(key__icontains=word)
        compared = embedded.model if embedded.vector is not None else None
        fallback = shown(_uncompared(actor, layer, category, compared)).filter(key_match)
        for entry in fallback.order_by("-confidence", "key")[: count - len(result.results)]:
            result.results.append(SearchResult(EntryView.of(entry), None))
    return result


def _uncompared(
    actor: Actor, layer: str, category: str | None, model: str | None
) -> QuerySet[Entry]:
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
    statements = read_statements()
    not_compared = uncompared_statements(model if vector is not None else "")[
        "promoted_not_compared"
    ]
    params = {
        "account": actor.account.pk,
        "live": Entry.Status.LIVE,
        "account_layer": Layer.ACCOUNT,
        "min_confidence": business_settings.PROMOTE_MIN_CONFIDENCE,
        "ready": EmbeddedModel.EmbeddingStatus.READY,
        "model": model if vector is not None else "",
    }
    if vector is None:
        ((count,),) = run_one(not_compared, params, replica=True)
        return NearEntries(found=[], not_compared=count)
    rows, ((count,),) = run(
        (
            statements["promoted"],
            {**params, "vector": vector_param(vector), "limit": limit},
        ),
        (not_compared, params),
        replica=True,  # counted by the caller that shows them, on the primary
    )
    ring = keyring()
    found = [(view_from_row(row, ring), float(row[AFTER_VIEW])) for row in rows]
    return NearEntries(found=found, not_compared=count)
