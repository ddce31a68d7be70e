"""Knowledge search (SPEC 13): one question over the account's promoted business memory and
every active prospect note of every domain, ranked together by meaning.

Each memory answers for its own rows (``notes_nearest``, ``promoted_nearest``: both filter
by the acting account, and only account-layer entries are ever promoted, so no member's
own context is reachable); this module ranks the two together, says where each hit came
from and whether its company must not be contacted, and keeps the answer within
PAYLOAD_MAX_BYTES. It writes nothing: the operation counts a use of each entry shown.
"""

from __future__ import annotations

from outreach.access import Actor
from outreach.characters import cut
from outreach.selectors import relationship_from_row, relationship_query
from outreach.validation import FieldProblems
from pgstatements import run
from prospect_memory.business.records import EntryView
from prospect_memory.business.rules import flattened
from prospect_memory.business.selectors.search import promoted_nearest
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.knowledge.conf import knowledge_settings
from prospect_memory.knowledge.payloads import hit_data, size_of
from prospect_memory.knowledge.records import About, Hit, KnowledgeSearch
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.records import NoteView
from prospect_memory.notes.rules import is_stale, stop_reasons
from prospect_memory.notes.selectors import notes_nearest

BUSINESS_MEMORY = "business_memory"
PROSPECT_NOTES = "prospect_notes"
KINDS = (BUSINESS_MEMORY, PROSPECT_NOTES)


def _clean(query, kinds, domain, limit) -> tuple[str, tuple[str, ...], str | None, int]:
    problems = FieldProblems()
    most = knowledge_settings.QUERY_MAX_CHARS
    if not isinstance(query, str) or not query.strip() or len(query) > most:
        problems.add("query", f"query must be text of 1 to {most:,} characters")
    elif "\x00" in query:
        problems.add("query", "query may not contain NUL characters")
    if kinds is None:
        kinds = KINDS
    elif (
        not isinstance(kinds, list | tuple)
        or not kinds
        or any(k not in KINDS for k in kinds)
        or len(set(kinds)) != len(kinds)
    ):
        problems.add("kinds", f"kinds must list one or both of {', '.join(KINDS)}, once each")
    top = knowledge_settings.LIMIT_MAX
    if limit is None:
        limit = knowledge_settings.LIMIT_DEFAULT
    elif isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        problems.add("limit", f"limit must be a whole number from 1 to {top}")
    if domain is not None and not isinstance(domain, str):
        problems.add("domain", "domain must be a company domain or an email address")
    problems.raise_if_any()
    resolved = resolve_domain(domain).domain if domain is not None else None
    return query.strip(), tuple(kinds), resolved, limit


def knowledge_search(
    *,
    actor: Actor,
    query: object,
    kinds: object = None,
    domain: object = None,
    limit: object = None,
) -> KnowledgeSearch:
    """The hits nearest ``query`` among what the account knows (``kinds``; ``domain``
    narrows prospect notes to one company), nearest first."""
    query, kinds, domain, limit = _clean(query, kinds, domain, limit)
    embedded = embed_within_budget(query, query=True)
    # Without a query vector nothing is compared: the counts below then cover every row.
    vector, model = embedded.vector, embedded.model if embedded.vector is not None else ""
    result = KnowledgeSearch(problem=embedded.problem, domain=domain or "")
    hits: list[Hit] = []
    if PROSPECT_NOTES in kinds:
        notes = notes_nearest(actor=actor, vector=vector, model=model, domain=domain, limit=limit)
        result.not_compared += notes.not_compared
        hits += [_note_hit(note, distance) for note, distance in notes.found]
    if BUSINESS_MEMORY in kinds:
        entries = promoted_nearest(actor=actor, vector=vector, model=model, limit=limit)
        result.not_compared += entries.not_compared
        hits += [_entry_hit(entry, distance) for entry, distance in entries.found]
    hits.sort(key=lambda h: (h.distance, h.kind, h.note.id if h.note else h.entry.key))
    result.hits = hits[:limit]
    _add_about(actor, result.hits)
    _keep_within_cap(result)
    return result


def _excerpt(text: str) -> str:
    most = knowledge_settings.EXCERPT_CHARS
    text = " ".join(text.split())
    return cut(text, most)


def _note_hit(note: NoteView, distance: float) -> Hit:
    return Hit(
        kind=PROSPECT_NOTES,
        distance=distance,
        title=note.title,
        excerpt=_excerpt(note.body),
        stale=note.stale,
        note=note,
    )


def _entry_hit(entry: EntryView, distance: float) -> Hit:
    # An entry is stale by the same rule as a note, from when its source extracted it (or,
    # without one, when a member or an agent last wrote it: a demotion is not news).
    observed = entry.source.extracted_at or entry.written_at or entry.updated_at
    return Hit(
        kind=BUSINESS_MEMORY,
        distance=distance,
        title=entry.key,
        excerpt=_excerpt(flattened(entry.value)),
        stale=is_stale(observed.date()),
        entry=entry,
    )


def _add_about(actor: Actor, hits: list[Hit]) -> None:
    """Each note's company and its stop reasons, read for all companies in one round trip."""
    domains = sorted({h.note.domain for h in hits if h.note is not None})
    if not domains:
        return
    queries = [relationship_query(account=actor.account, domain=d) for d in domains]
    # Whether to stop is the primary's answer, even when a replica serves the search.
    rows = run(*queries)
    about = {
        domain: About(domain, stop_reasons(relationship_from_row(found[0]), domain))
        for domain, found in zip(domains, rows, strict=True)
    }
    for hit in hits:
        if hit.note is not None:
            hit.about = about[hit.note.domain]


def _keep_within_cap(result: KnowledgeSearch) -> None:
    """Leave out the farthest hits until the answer fits PAYLOAD_MAX_BYTES."""
    cap = knowledge_settings.PAYLOAD_MAX_BYTES
    sizes = [size_of(hit_data(h)) for h in result.hits]
    while result.hits and sum(sizes) > cap:
        result.hits.pop()
        sizes.pop()
        result.truncated = True
