"""Saving and deleting notes, and counting agent recalls."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import cache

from django.db import transaction
from django.utils import timezone

import pgstatements as sql
from outreach.access import Actor, require_module_admin
from outreach.characters import cut
from pgstatements import run
from prospect_memory.core import metering
from prospect_memory.core.crypto import keyring, row_binding, unseal_bound
from prospect_memory.core.embeddings.budget import Embedded, embed_while
from prospect_memory.core.integrity import dumps as integrity_dumps
from prospect_memory.core.integrity import integrity_data
from prospect_memory.core.models import FLAG_FIELDS, UsageEvent, flags_from_row
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import DailyLimitReached, DomainNoteLimitReached
from prospect_memory.notes.models import AuditEvent, DailySaveCount, Dossier, Note
from prospect_memory.notes.records import DeleteResult, NoteView, Overlap, Recall, SaveResult
from prospect_memory.notes.rules import (
    ACTIVE_IN_DOSSIER,
    IN_ITS_DOSSIER,
    NEWEST_FIRST,
    clean_note_input,
    compaction_suggested,
    embedding_input,
    normalise_url,
    note_flags,
    utc_today,
)
from prospect_memory.notes.selectors import NOTE_TABLE, active_notes, note_for_actor, note_view
from prospect_memory.notes.services.dossiers import (
    build_note,
    delete_notes,
    lock_dossier,
    lock_dossier_statement,
    queue_embedding,
    set_count,
    written_note_view,
)

# --- limits ----------------------------------------------------------------------------------


def _next_utc_midnight(today: date) -> datetime:
    return datetime.combine(today + timedelta(days=1), time.min, tzinfo=UTC)


def _daily_limit_error(actor: Actor, today: date) -> DailyLimitReached:
    limit = notes_settings.DAILY_SAVE_LIMIT
    opens = _next_utc_midnight(today)
    wait = opens - timezone.now()
    hours, minutes = divmod(max(int(wait.total_seconds()) // 60, 0), 60)
    resets_at = opens.isoformat().replace("+00:00", "Z")
    return DailyLimitReached(
        f"Account '{actor.account.slug}' has saved {limit} notes today (UTC), the daily "
        f"limit. Saving opens again at {resets_at} (in {hours} h {minutes} min); until then, "
        "recall and reuse what is stored.",
        details={"limit": limit, "resets_at": resets_at},
    )


def domain_limit_error(domain: str, count: int) -> DomainNoteLimitReached:
    limit = notes_settings.DOMAIN_NOTE_LIMIT
    return DomainNoteLimitReached(
        f"{domain} has {count} active notes, the most one domain may hold ({limit}). Compact "
        f"the dossier (outreach_compact_prospect_context with expected_note_count={count}) "
        "or delete outdated notes, then save again.",
        details={"domain": domain, "note_count": count, "limit": limit},
    )


# --- save ------------------------------------------------------------------------------------
# A save reads twice: before it pays for an embedding, whether a limit is already reached;
# under the dossier's lock, the dossier's notes to compare the new one with. Both are
# hand-written statements, prepared per connection, sent with the save's other statements.


@cache
def save_statements() -> tuple[str, str]:
    """Today's saves of the account and the dossier's count of active notes (either NULL
    when there is no row yet); and the dossier's active notes, newest first, each with its
    distance to the new note's vector (NULL where not comparable: no vector of this model,
    or no vector to compare with)."""
    note, dossier = Note._meta.db_table, Dossier._meta.db_table
    saves = DailySaveCount._meta.db_table
    early = f"""
    SELECT (SELECT s.saves FROM {saves} s
             WHERE s.account_id = %(account)s AND s.day = %(day)s),
           (SELECT d.active_note_count FROM {dossier} d
             WHERE d.account_id = %(account)s AND d.domain = %(domain)s)
    """  # noqa: S608  (names from the models, values are parameters)
    # save_overlap reads these columns in this order.
    compared = f"""
    SELECT n.id::text, n.account_id, n.title_ciphertext, n.body_ciphertext, n.source_urls,
           n.observed_at, n.integrity_ciphertext,
           CASE WHEN n.embedding_model = %(model)s AND n.embedding IS NOT NULL
                THEN n.embedding <=> %(vector)s::vector END AS distance
      FROM {note} n
      JOIN {dossier} d ON {IN_ITS_DOSSIER}
     WHERE {ACTIVE_IN_DOSSIER}
     ORDER BY {NEWEST_FIRST}
    """  # noqa: S608
    return early, compared


def _overlap(rows: list[tuple], new_urls: list[str], embedded: Embedded) -> Overlap:
    """Overlap of a new note with the dossier's active notes (``rows`` of
    ``save_statements``' second statement): only the notes shown back are opened."""
    provider = embedded.provider
    result = Overlap(problem=embedded.problem)
    wanted = {normalise_url(u): u for u in new_urls}
    excerpt = notes_settings.OVERLAP_EXCERPT_CHARS
    ring = keyring()
    for note_id, account_id, title, body, source_urls, observed_at, integrity, distance in rows:
        shared = [wanted[k] for k in (normalise_url(u) for u in source_urls) if k in wanted]
        if shared:
            result.shared_sources.append({"note_id": note_id, "urls": sorted(set(shared))})
        if distance is None:
            result.skipped += 1
            continue
        result.compared += 1
        if not (
            distance <= provider.near_duplicate_distance or distance <= provider.overlap_distance
        ):
            continue  # not near (and a distance that is no number is near nothing)
        bound = row_binding(table=NOTE_TABLE, account_id=account_id, row_id=note_id)
        # Stored text shown back carries its flags, as in every answer (SPEC 15).
        flags = flags_from_row(
            integrity, table=NOTE_TABLE, account_id=account_id, row_id=note_id, ring=ring
        )
        flagged = {"integrity": integrity_data(flags)} if flags else {}
        if distance <= provider.near_duplicate_distance:
            result.near_duplicates.append(
                {
                    "id": note_id,
                    "title": unseal_bound(title, row=bound, field=b"title", ring=ring),
                    "body": unseal_bound(body, row=bound, field=b"body", ring=ring),
                    "distance": round(distance, 4),
                    "source_urls": list(source_urls),
                    "observed_at": observed_at.isoformat(),
                    **flagged,
                }
            )
        else:
            result.overlaps.append(
                {
                    "id": note_id,
                    "title": unseal_bound(title, row=bound, field=b"title", ring=ring),
                    "distance": round(distance, 4),
                    "excerpt": cut(
                        unseal_bound(body, row=bound, field=b"body", ring=ring), excerpt + 1
                    ),
                    **flagged,
                }
            )
    result.near_duplicates.sort(key=lambda d: d["distance"])
    result.overlaps.sort(key=lambda d: d["distance"])
    return result


def note_save(
    *,
    actor: Actor,
    domain: object,
    body: object,
    title: object = None,
    source_urls: object = None,
    observed_at: object = None,
) -> SaveResult:
    """Store one finding about the company at ``domain``."""
    require_module_admin(actor)
    resolved = resolve_domain(domain).domain
    note_input = clean_note_input(
        title=title, body=body, source_urls=source_urls, observed_at=observed_at
    )
    today = utc_today()
    account = actor.account.pk
    early, compared = save_statements()

    # Refuse early, before paying for an embedding, when a limit is already reached; the
    # authoritative checks run again under the locks below.
    ((saves, current),) = sql.run_one(early, {"account": account, "day": today, "domain": resolved})
    if (saves or 0) >= notes_settings.DAILY_SAVE_LIMIT:
        raise _daily_limit_error(actor, today)
    if current is not None and current >= notes_settings.DOMAIN_NOTE_LIMIT:
        raise domain_limit_error(resolved, current)

    text = embedding_input(note_input.title, note_input.body)
    # An agent's text is checked (SPEC 15), while the provider computes the vector; a
    # person's own text is their decision.
    embedded, flags = embed_while(
        text,
        lambda: (
            note_flags(
                title=note_input.title, body=note_input.body, source_urls=note_input.source_urls
            )
            if actor.oauth_application is not None
            else []
        ),
    )

    with transaction.atomic():
        # In one pipeline, in this order: one of today's saves taken atomically (or none
        # left), the dossier locked (made if new), and then, under that lock, its notes.
        # A save refused here (the day's last slot taken since the early read) has locked
        # and read for nothing, and undoes it all.
        slot, locked, rows = run(
            sql.slot_statement(
                DailySaveCount,
                key={"account": account, "day": today},
                counter="saves",
                limit=notes_settings.DAILY_SAVE_LIMIT,
            ),
            lock_dossier_statement(actor, resolved),
            (
                compared,
                {
                    "account": account,
                    "domain": resolved,
                    "active": Note.Status.ACTIVE,
                    "model": embedded.model,
                    "vector": sql.vector_param(embedded.vector),
                },
            ),
        )
        if sql.slot_taken(slot) is None:
            raise _daily_limit_error(actor, today)
        dossier = sql.locked_row(Dossier, locked)
        overlap, count = _overlap(rows, note_input.source_urls, embedded), len(rows)
        if count >= notes_settings.DOMAIN_NOTE_LIMIT:
            raise domain_limit_error(resolved, count)
        if embedded.vector is None:
            overlap.skipped = count
            overlap.compared = 0
        note = build_note(
            actor,
            dossier,
            title=note_input.title,
            body=note_input.body,
            source_urls=note_input.source_urls,
            observed_at=note_input.observed_at,
            embedded=embedded,
            flags=flags,
        )
        dossier.active_note_count = count + 1
        usage = UsageEvent.build(
            actor,
            memory=UsageEvent.Memory.PROSPECT,
            kind=UsageEvent.Kind.SAVE,
            subject=resolved,
            near_duplicate=bool(overlap.near_duplicates),
            shared_source=bool(overlap.shared_sources),
        )
        # The note, the dossier's count, the audit event and the usage row in one round trip.
        run(
            sql.insert(note),
            sql.update(dossier, ["active_note_count", "updated_at"], matching=["account"]),
            sql.insert(
                AuditEvent.build(
                    actor, action=AuditEvent.Action.SAVE, domain=resolved, note_id=note.id
                )
            ),
            sql.insert(usage),
        )
        queue_embedding(note)

    return SaveResult(
        note=written_note_view(note, actor, resolved),
        note_count=count + 1,
        overlap=overlap,
        embedding_status=note.embedding_status,
        compaction_suggested=compaction_suggested(count + 1),
    )


# --- delete ----------------------------------------------------------------------------------


def note_delete(*, actor: Actor, note_id: object) -> DeleteResult:
    """Remove a note from the dossier and every future recall, keeping an audit event.

    Deleting a merged note deletes the notes it replaced too: the finding is gone for good.
    """
    require_module_admin(actor)
    note = note_for_actor(actor, note_id)
    domain = note.dossier.domain
    with transaction.atomic():
        dossier = lock_dossier(actor, domain, create=False)
        note = note_for_actor(actor, note_id, lock=True)
        superseded = list(
            Note.objects.filter(account=actor.account, superseded_by=note).values_list(
                "id", flat=True
            )
        )
        note_pk = note.pk
        delete_notes(actor.account.pk, [note_pk])
        count = active_notes(actor, dossier).count()
        set_count(dossier, count)
        AuditEvent.record(
            actor,
            action=AuditEvent.Action.DELETE,
            domain=domain,
            note_id=note_pk,
            related_note_ids=superseded,
        )
    return DeleteResult(
        note_id=note_pk, domain=domain, also_deleted_note_ids=superseded, note_count=count
    )


# --- integrity ------------------------------------------------------------------------------


def note_unflag(*, actor: Actor, note_id: object) -> NoteView:
    """A module admin who read a flagged note clears its flags (audited, SPEC 15)."""
    require_module_admin(actor)
    note = note_for_actor(actor, note_id)
    domain = note.dossier.domain
    with transaction.atomic():
        lock_dossier(actor, domain, create=False)
        note = note_for_actor(actor, note_id, lock=True)
        if note.flagged_at is not None:
            note.clear_flags()
            note.save(update_fields=FLAG_FIELDS)
            AuditEvent.record(
                actor, action=AuditEvent.Action.UNFLAG, domain=domain, note_id=note.pk
            )
    return note_view(note, domain=domain)


# --- recall metering -------------------------------------------------------------------------


def recall_record(*, actor: Actor, recall: Recall) -> None:
    """Count an agent's recall for memory health; a fresh dossier means reused from memory."""
    metering.usage_record(
        actor=actor,
        memory=UsageEvent.Memory.PROSPECT,
        kind=UsageEvent.Kind.RECALL,
        subject=recall.domain,
        from_memory=recall.known and not recall.stale,
    )


def notes_rescan(*, batch_size: int = 500) -> tuple[int, int]:
    """Check every note no person has reviewed with today's integrity check (after an
    upgrade, or new patterns): (notes read, notes whose flags changed)."""
    seen = changed = 0
    rows = Note.objects.filter(integrity_reviewed_at__isnull=True).order_by("pk")
    last = None
    while True:
        batch = list((rows.filter(pk__gt=last) if last else rows)[:batch_size])
        if not batch:
            return seen, changed
        for note in batch:
            seen += 1
            # Judged as written: a reader gets U+FFFD for a hidden character from before the
            # check, which would hide the order it cuts.
            flags = note_flags(
                title=Note.title.stored_text(note),
                body=Note.body.stored_text(note),
                source_urls=note.source_urls,
            )
            if integrity_dumps(flags) != integrity_dumps(note.flags):
                note.set_flags(flags)
                note.save(update_fields=FLAG_FIELDS)
                changed += 1
        last = batch[-1].pk
