"""Reads of prospect memory. Every query filters by the acting account.

Tenant objects are only fetched through the ``*_for_actor`` helpers, which answer "not
found" for anything outside the actor's account, whether it exists elsewhere or not.
"""

from __future__ import annotations

from datetime import date
from functools import cache

from django.contrib.auth import get_user_model
from django.db.models import Sum
from oauth2_provider.models import get_application_model

from outreach.access import Actor, require_outreach
from outreach.characters import readable_name
from outreach.models import Member
from outreach.selectors import relationship_from_row, relationship_query
from pgstatements import literal, reads_elsewhere, run, run_one, vector_param
from prospect_memory.core.crypto import keyring, row_binding, unseal, unseal_bound
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.core.embeddings.vectors import distance_to
from prospect_memory.core.ids import uuid_or_none
from prospect_memory.core.models import EmbeddedModel, flags_from_row
from prospect_memory.notes import answers, pairs
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import NotFound
from prospect_memory.notes.index import index_ready, indexed_expression
from prospect_memory.notes.models import Compaction, Dossier, Note
from prospect_memory.notes.payloads import json_array_size, note_answer
from prospect_memory.notes.records import NearNotes, NotesPage, NoteView, Recall
from prospect_memory.notes.rules import (
    ACTIVE_IN_DOSSIER,
    IN_ITS_DOSSIER,
    NEWEST_FIRST,
    NOTE_COLUMN_COUNT,
    NOTE_OBSERVED,
    compaction_suggested,
    dossier_stale,
    freshness,
    note_columns,
    stale_cutoff,
    stop_reasons,
    utc_today,
)

NOTE_TABLE = Note._meta.label_lower  # the binding of a note's sealed fields


# --- recall statements ---------------------------------------------------------------------
# Recall is the hot path of every agent run: its notes and overlap pairs (``notes.pairs``)
# are read with hand-written statements (no model instances), filtered by account first,
# served by the note_dossier_active index, built once from the models' tables and prepared
# per connection.


def _note_read(created_at: str) -> tuple[str, str]:
    """A note's columns (``rules.note_columns``, the time it was stored as ``created_at``
    writes it) and the joins to who wrote it, for a statement reading ``n``."""
    member, user = Member._meta.db_table, get_user_model()._meta.db_table
    application = get_application_model()._meta.db_table
    columns = note_columns(created_at=created_at, username=get_user_model().USERNAME_FIELD)
    writers = f"""
      LEFT JOIN {member} m ON m.id = n.member_id
      LEFT JOIN {user} u ON u.id = m.user_id
      LEFT JOIN {application} a ON a.id = n.oauth_application_id"""
    return columns, writers


@cache
def _recall_notes_statement() -> str:
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    # The time a note was stored comes in UTC without its zone: the answer's form in fewer
    # steps (note_answer_from_row).
    columns, writers = _note_read("n.created_at AT TIME ZONE 'UTC'")
    return f"""
    SELECT {columns}
      FROM {note} n
      JOIN {dossier} d ON {IN_ITS_DOSSIER}{writers}
     WHERE {ACTIVE_IN_DOSSIER}
     ORDER BY {NEWEST_FIRST}
    """  # noqa: S608  (names from the models, values are parameters)


def _nearest_notes(candidates: str) -> str:
    """The notes of ``candidates`` (a statement giving ``id`` and ``distance``, nearest
    first, at most ``limit``), read with their company and who wrote them: a note's
    columns, then its domain and its distance."""
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    columns, writers = _note_read("n.created_at")
    return f"""
    WITH nearest AS MATERIALIZED ({candidates})
    SELECT {columns}, d.domain, nearest.distance
      FROM nearest
      JOIN {note} n ON n.id = nearest.id
      JOIN {dossier} d ON {IN_ITS_DOSSIER}{writers}
     ORDER BY nearest.distance, n.id
    """  # noqa: S608  (names from the models, values are parameters)


@cache
def _nearest_statements() -> tuple[str, str]:
    """The account's active notes nearest a vector, every one compared (optionally of one
    company), and how many could not be compared (no vector of this model yet)."""
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    active = f"""n.account_id = %(account)s AND n.status = %(active)s
       AND (%(domain)s::text IS NULL OR n.dossier_id IN (
            SELECT id FROM {dossier}
             WHERE account_id = %(account)s AND domain = %(domain)s::text))"""  # noqa: S608
    compared = "n.embedding_status = %(ready)s AND n.embedding_model = %(model)s"
    nearest = _nearest_notes(
        f"""
        SELECT n.id, n.embedding <=> %(vector)s::vector AS distance
          FROM {note} n
         WHERE {active} AND {compared}
         ORDER BY distance, n.id
         LIMIT %(limit)s"""  # noqa: S608
    )
    not_compared = f"SELECT count(*) FROM {note} n WHERE {active} AND NOT ({compared})"  # noqa: S608
    return nearest, not_compared


#: Filtered HNSW scans go on until enough rows of the account are found (pgvector 0.8).
_ITERATIVE_SCAN = "SET hnsw.iterative_scan = relaxed_order"
_EF_SEARCH = "SET hnsw.ef_search = {ef_search}"


@cache
def _indexed_statement(model: str, dimensions: int) -> str:
    """Nearest notes through ``model``'s HNSW index (``notes.index``): the statement names
    the index's expression and its predicate literally, so the planner can use it; the
    scan goes on until the account filter has found enough rows."""
    expression = indexed_expression(dimensions, table_alias="n")
    name = literal(model)
    return _nearest_notes(
        f"""
        SELECT n.id, {expression} <=> %(vector)s::vector({int(dimensions)}) AS distance
          FROM {Note._meta.db_table} n
         WHERE n.account_id = %(account)s AND n.status = 'active'
           AND n.embedding_status = 'ready' AND n.embedding_model = {name}
         ORDER BY {expression} <=> %(vector)s::vector({int(dimensions)})
         LIMIT %(limit)s"""  # noqa: S608  (names from the models, the model's name quoted)
    )


def _account_note_count(actor: Actor) -> int:
    return (
        Dossier.objects.filter(account=actor.account).aggregate(n=Sum("active_note_count"))["n"]
        or 0
    )


def notes_nearest(
    *, actor: Actor, vector: list[float] | None, model: str, domain: str | None, limit: int
) -> NearNotes:
    """The account's active notes nearest ``vector`` (a query's, of ``model``); without a
    vector, none, and every note counted as not compared.

    Exact (every candidate compared) for a search within one company, for accounts of up to
    KNOWLEDGE_EXACT_MAX_NOTES notes and for a model without a valid index; through the
    model's HNSW index otherwise (``notes.index``).
    """
    nearest, not_compared = _nearest_statements()
    dimensions = len(vector) if vector is not None else 0
    indexed = (
        vector is not None
        and domain is None
        and _account_note_count(actor) > notes_settings.KNOWLEDGE_EXACT_MAX_NOTES
        and index_ready(model)
    )
    if indexed:
        nearest = _indexed_statement(model, dimensions)
    params = {
        "account": actor.account.pk,
        "active": Note.Status.ACTIVE,
        "ready": EmbeddedModel.EmbeddingStatus.READY,
        "model": model if vector is not None else "",
        "domain": domain,
    }
    if vector is None:
        ((count,),) = run_one(not_compared, params, replica=True)
        return NearNotes(found=[], not_compared=count)
    statements = [
        (nearest, {**params, "vector": vector_param(vector), "limit": limit}),
        (not_compared, params),
    ]
    if indexed:  # the session's index scan settings, sent in the same round trip
        ef_search = int(notes_settings.KNOWLEDGE_INDEX_EF_SEARCH)
        settings = [(_ITERATIVE_SCAN, None), (_EF_SEARCH.format(ef_search=ef_search), None)]
        # Planned for this account's values: a generic plan may not use the index at all.
        _, _, rows, ((count,),) = run(*settings, *statements, prepare=False, replica=True)
    else:
        # Planned for the values too: with the domain and account known, the planner takes
        # the account's index (a generic plan was 1.5x slower for an account of 20,000).
        rows, ((count,),) = run(*statements, prepare=False, replica=True)
    today = utc_today()
    ring, cutoff = keyring(), stale_cutoff(today)
    found = [
        (
            note_view_from_row(
                row[:NOTE_COLUMN_COUNT],
                domain=row[NOTE_COLUMN_COUNT],
                today=today,
                ring=ring,
                cutoff=cutoff,
            ),
            float(row[NOTE_COLUMN_COUNT + 1]),
        )
        for row in rows
    ]
    return NearNotes(found=found, not_compared=count)


# --- access helpers ------------------------------------------------------------------------


def note_for_actor(actor: Actor, note_id: object, *, lock: bool = False) -> Note:
    """An active note of the actor's account, or NotFound."""
    pk = uuid_or_none(note_id)
    rows = Note.objects.filter(account=actor.account, status=Note.Status.ACTIVE)
    if lock:
        rows = rows.select_for_update(of=("self",))
    note = rows.select_related("dossier").filter(pk=pk).first() if pk else None
    if note is None:
        raise NotFound(
            f"No note {str(note_id)[:64]!r} in this account. Recall the domain to see the "
            "ids of its notes.",
            details={"note_id": str(note_id)[:64]},
        )
    return note


def compaction_for_actor(actor: Actor, compaction_id: object) -> Compaction:
    pk = uuid_or_none(compaction_id)
    compaction = (
        Compaction.objects.filter(account=actor.account, pk=pk).select_related("dossier").first()
        if pk
        else None
    )
    if compaction is None:
        raise NotFound(
            f"No compaction {str(compaction_id)[:64]!r} in this account.",
            details={"compaction_id": str(compaction_id)[:64]},
        )
    return compaction


def notes_list(*, actor: Actor, domain: object = None, stale: bool | None = None):
    """Active notes of the account, newest observed first, optionally for one domain."""
    require_outreach(actor)
    rows = Note.objects.filter(account=actor.account, status=Note.Status.ACTIVE)
    if domain is not None:
        rows = rows.filter(dossier__domain=resolve_domain(domain).domain)
    if stale is not None:
        cutoff = stale_cutoff()
        rows = (
            rows.filter(observed_at__lt=cutoff) if stale else rows.filter(observed_at__gte=cutoff)
        )
    return rows.select_related("dossier", "member__user", "oauth_application").order_by(
        "-observed_at", "-created_at", "id"
    )


def notes_page(
    *, actor: Actor, domain: object = None, stale: bool | None = None, page: int, page_size: int
) -> NotesPage:
    """One page of :func:`notes_list` (a page past the end is empty)."""
    rows = notes_list(actor=actor, domain=domain, stale=stale)
    count = rows.count()
    start = (page - 1) * page_size
    notes = list(rows[start : start + page_size]) if start < count else []
    return NotesPage(
        count=count,
        page=page,
        page_size=page_size,
        notes=[note_view(n, domain=n.dossier.domain) for n in notes],
    )


def active_notes(actor: Actor, dossier: Dossier | None):
    """The active notes of one dossier of the actor's account (none without a dossier)."""
    if dossier is None:
        return Note.objects.none()
    return Note.objects.filter(account=actor.account, dossier=dossier, status=Note.Status.ACTIVE)


def dossier_note_count(actor: Actor, domain: str) -> int:
    return (
        Dossier.objects.filter(account=actor.account, domain=domain)
        .values_list("active_note_count", flat=True)
        .first()
    ) or 0


def dossier_exists(actor: Actor, domain: str) -> bool:
    return Dossier.objects.filter(account=actor.account, domain=domain).exists()


# --- views of notes ------------------------------------------------------------------------


def note_view(note: Note, *, domain: str, today: date | None = None) -> NoteView:
    """A note as every interface shows it: decrypted, with freshness and attribution."""
    today = today or utc_today()
    member = note.member.user.get_username() if note.member_id and note.member else None
    client = (
        note.oauth_application.name
        if note.oauth_application_id and note.oauth_application
        else None
    )
    stale, age_days = freshness(note.observed_at, today=today, cutoff=stale_cutoff(today))
    return NoteView(
        id=str(note.id),
        domain=domain,
        title=note.title,
        body=note.body,
        source_urls=list(note.source_urls),
        observed_at=note.observed_at,
        created_at=note.created_at,
        stale=stale,
        age_days=age_days,
        member=member,
        oauth_client=client,
        flags=note.flags,
    )


def note_view_from_row(row: tuple, *, domain: str, today: date, ring, cutoff: date) -> NoteView:
    """From a row of the nearest notes' statement (its first columns, in order), without
    model instances.

    ``ring`` and ``cutoff`` are looked up once by the caller building many views.
    """
    (note_id, account_id, title_token, body_token, source_urls, observed_at, created_at,
     member, client, integrity_token) = row  # fmt: skip
    where = {"table": NOTE_TABLE, "account_id": account_id, "row_id": note_id, "ring": ring}
    flags = flags_from_row(integrity_token, **where)
    stale, age_days = freshness(observed_at, today=today, cutoff=cutoff)
    return NoteView(
        id=note_id,
        domain=domain,
        title=unseal(title_token, field="title", **where),
        body=unseal(body_token, field="body", **where),
        source_urls=source_urls,
        observed_at=observed_at,
        created_at=created_at,
        stale=stale,
        age_days=age_days,
        member=member,
        oauth_client=client,
        flags=flags,
    )


def note_answer_from_row(row: tuple, *, today: date, ring, cutoff: date) -> dict:
    """A row of the recall statement in the answer's form (``payloads.note_answer``): the
    recall's hot path builds no :class:`NoteView` between."""
    (note_id, account_id, title_token, body_token, source_urls, observed_at, created_at,
     member, client, integrity_token) = row  # fmt: skip
    bound = row_binding(table=NOTE_TABLE, account_id=account_id, row_id=note_id)
    return note_answer(
        note_id,
        unseal_bound(title_token, row=bound, field=b"title", ring=ring),
        unseal_bound(body_token, row=bound, field=b"body", ring=ring),
        source_urls,
        observed_at,
        *freshness(observed_at, today=today, cutoff=cutoff),
        created_at,
        readable_name(member) if member else member,
        readable_name(client) if client else client,
        flags_from_row(
            integrity_token, table=NOTE_TABLE, account_id=account_id, row_id=note_id, ring=ring
        ),
    )


# --- recall ----------------------------------------------------------------------------------


def dossier_recall(*, actor: Actor, domain: object, query: str | None = None) -> Recall:
    """What the account knows about a company and whether to contact it at all."""
    require_outreach(actor)
    resolved = resolve_domain(domain)
    account = actor.account
    relationship_sql, params = relationship_query(
        account=account, domain=resolved.domain, address=resolved.address
    )
    pairs_key = pairs.company_key(account.pk, resolved.domain)
    kept = pairs.kept_for(pairs_key)
    params.update(
        active=Note.Status.ACTIVE,
        ready=EmbeddedModel.EmbeddingStatus.READY,
        window=pairs_key.window,
        model=pairs_key.model,
        threshold=pairs_key.threshold,
        known=pairs.known_versions(pairs_key, kept),
    )
    notes_sql, pairs_sql = _recall_notes_statement(), pairs.pairs_statement()
    if reads_elsewhere():
        # Read from a replica: whether to stop (a suppression, a reply anyone recorded) is
        # the primary's answer, never a replica's a few seconds behind.
        (relationship_rows,) = run((relationship_sql, params))
        note_rows, pair_rows = run((notes_sql, params), (pairs_sql, params), replica=True)
    else:
        # One round trip for the three reads of a recall: relationship, notes, overlap pairs.
        relationship_rows, note_rows, pair_rows = run(
            (relationship_sql, params), (notes_sql, params), (pairs_sql, params)
        )
    relationship = relationship_from_row(relationship_rows[0])
    today = utc_today()
    ring, cutoff = keyring(), stale_cutoff(today)
    newest = note_rows[0][NOTE_OBSERVED] if note_rows else None
    note_payloads, sizes = answers.note_answers(
        note_rows,
        today=today,
        cutoff=cutoff,
        ring=ring,
        make=lambda row: note_answer_from_row(row, today=today, ring=ring, cutoff=cutoff),
    )
    recall = Recall(
        domain=resolved.domain,
        note_payloads=note_payloads,
        note_count=len(note_rows),
        overlap_pairs=pairs.answer_and_keep(pairs_key, kept, pair_rows),
        relationship=relationship,
        newest_observed_at=newest,
        stop_reasons=stop_reasons(relationship, resolved.domain),
        stale=dossier_stale(newest),
        compaction_suggested=compaction_suggested(len(note_rows)),
    )
    _apply_payload_cap(recall, actor, query, sizes)
    return recall


def _apply_payload_cap(
    recall: Recall, actor: Actor, query: str | None, note_sizes: list[int]
) -> None:
    """Above RECALL_PAYLOAD_MAX_BYTES keep the best-ranked notes that fit, newest first.
    ``note_sizes``: each note's length in JSON, in order."""
    cap = notes_settings.RECALL_PAYLOAD_MAX_BYTES
    if json_array_size(note_sizes) <= cap:
        return
    sizes = {p["id"]: size for p, size in zip(recall.note_payloads, note_sizes, strict=True)}
    ranked = [p["id"] for p in recall.note_payloads]  # recency
    if query and query.strip():
        embedded = embed_within_budget(query.strip(), query=True)
        if embedded.vector is not None:
            distances = {
                str(note_id): distance
                for note_id, distance in Note.objects.filter(id__in=ranked, account=actor.account)
                .annotate(distance=distance_to(embedded.vector, embedded.model))
                .values_list("id", "distance")
            }
            order = {note_id: i for i, note_id in enumerate(ranked)}
            ranked.sort(key=lambda i: (distances.get(i) is None, distances.get(i) or 0.0, order[i]))
            recall.ranking = "query"
    # The kept notes' array within the cap to the byte: 1 + each note's length and comma
    # (the last one's is the closing bracket), as ``json_array_size`` counts it.
    kept: set[str] = set()
    budget = cap - 1
    for note_id in ranked:
        if sizes[note_id] + 1 <= budget:
            kept.add(note_id)
            budget -= sizes[note_id] + 1
    recall.omitted_note_ids = [p["id"] for p in recall.note_payloads if p["id"] not in kept]
    recall.note_payloads = [p for p in recall.note_payloads if p["id"] in kept]
    recall.truncated = True
