"""Writes of prospect memory: save, compact, restore, delete, and key rotation.

Each write on a domain locks that domain's :class:`Dossier` row first, so the per-domain
cap, the compaction count check and restores see one order of events. The daily save
quota is a single atomic upsert on the account's counter row for the UTC day. The
embedding provider is called before any lock is taken (a slow provider must never hold a
lock), and every write is one transaction: nothing is ever half-written.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection, transaction
from django.utils import timezone

from outreach.access import Actor, require_module_admin
from outreach.sql import run
from prospect_memory.conf import app_settings
from prospect_memory.crypto import keyring
from prospect_memory.domains import resolve_domain
from prospect_memory.embedding_budget import Embedded, embed_within_budget
from prospect_memory.embeddings import PermanentEmbeddingError, get_provider
from prospect_memory.errors import (
    DailyLimitReached,
    DomainNoteLimitReached,
    NoteCountMismatch,
    NotFound,
    ValidationFailed,
)
from prospect_memory.models import (
    AuditEvent,
    Compaction,
    DailySaveCount,
    Dossier,
    Note,
    UsageEvent,
)
from prospect_memory.rules import (
    FieldError,
    clean_body,
    clean_note_input,
    clean_title,
    content_hash,
    embedding_input,
    normalise_url,
    raise_field_errors,
    utc_today,
)
from prospect_memory.selectors import (
    NoteView,
    compaction_for_actor,
    distance_annotation,
    note_for_actor,
)

logger = logging.getLogger(__name__)

# Gemini accepts at most 100 texts per batch request.
EMBED_BATCH = 100


# --- results -----------------------------------------------------------------------------


@dataclass
class Overlap:
    near_duplicates: list[dict] = field(default_factory=list)
    overlaps: list[dict] = field(default_factory=list)
    shared_sources: list[dict] = field(default_factory=list)
    compared: int = 0
    skipped: int = 0
    problem: str = ""

    def as_data(self) -> dict:
        complete = self.skipped == 0
        return {
            "near_duplicates": self.near_duplicates,
            "overlaps": self.overlaps,
            "shared_sources": self.shared_sources,
            "compared": self.compared,
            "skipped": self.skipped,
            "semantic_check": "complete" if complete else "partial",
            "semantic_check_note": (
                ""
                if complete
                else f"{self.skipped} stored note(s) were not compared by meaning"
                + (f" because {self.problem}" if self.problem else " (embeddings pending)")
                + "; empty buckets are not proof that this finding is new."
            ),
        }


@dataclass
class SaveResult:
    note: NoteView
    note_count: int
    overlap: Overlap
    embedding_status: str

    @property
    def compaction_suggested(self) -> bool:
        return self.note_count > app_settings.COMPACTION_SUGGESTED_ABOVE

    def as_data(self) -> dict:
        return {
            "note": self.note.as_data(),
            "note_count": self.note_count,
            "compaction_suggested": self.compaction_suggested,
            "embedding_status": self.embedding_status,
            "overlap": self.overlap.as_data(),
        }


@dataclass
class CompactResult:
    compaction_id: uuid.UUID
    note: NoteView
    superseded_note_ids: list[uuid.UUID]
    note_count: int

    def as_data(self) -> dict:
        return {
            "compaction_id": str(self.compaction_id),
            "note": self.note.as_data(),
            "superseded_note_ids": [str(i) for i in self.superseded_note_ids],
            "note_count": self.note_count,
            "compaction_suggested": self.note_count > app_settings.COMPACTION_SUGGESTED_ABOVE,
        }


@dataclass
class RestoreResult:
    compaction_id: uuid.UUID
    domain: str
    restored_note_ids: list[uuid.UUID]
    removed_note_id: uuid.UUID
    note_count: int

    def as_data(self) -> dict:
        return {
            "compaction_id": str(self.compaction_id),
            "domain": self.domain,
            "restored_note_ids": [str(i) for i in self.restored_note_ids],
            "removed_note_id": str(self.removed_note_id),
            "note_count": self.note_count,
        }


@dataclass
class DeleteResult:
    note_id: uuid.UUID
    domain: str
    also_deleted_note_ids: list[uuid.UUID]
    note_count: int

    def as_data(self) -> dict:
        return {
            "deleted_note_id": str(self.note_id),
            "domain": self.domain,
            "also_deleted_note_ids": [str(i) for i in self.also_deleted_note_ids],
            "note_count": self.note_count,
        }


# --- shared steps -----------------------------------------------------------------------


def _next_utc_midnight(today: date) -> datetime:
    return datetime.combine(today + timedelta(days=1), time.min, tzinfo=UTC)


def _daily_limit_error(actor: Actor, today: date) -> DailyLimitReached:
    limit = app_settings.DAILY_SAVE_LIMIT
    opens = _next_utc_midnight(today)
    wait = opens - timezone.now()
    hours, minutes = divmod(max(int(wait.total_seconds()) // 60, 0), 60)
    return DailyLimitReached(
        f"Account '{actor.account.slug}' has saved {limit} notes today (UTC), the daily "
        f"limit. Saving opens again at {opens.isoformat().replace('+00:00', 'Z')} "
        f"(in {hours} h {minutes} min); until then, recall and reuse what is stored.",
        details={"limit": limit, "resets_at": opens.isoformat().replace("+00:00", "Z")},
    )


def _domain_limit_error(domain: str, count: int) -> DomainNoteLimitReached:
    limit = app_settings.DOMAIN_NOTE_LIMIT
    return DomainNoteLimitReached(
        f"{domain} has {count} active notes, the most one domain may hold ({limit}). Compact "
        f"the dossier (outreach_compact_prospect_context with expected_note_count={count}) "
        "or delete outdated notes, then save again.",
        details={"domain": domain, "note_count": count, "limit": limit},
    )


def _count_daily_save(actor: Actor, today: date) -> None:
    """Take one of today's saves atomically, or refuse if none is left."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {DailySaveCount._meta.db_table} AS c (account_id, day, saves)
            VALUES (%s, %s, 1)
            ON CONFLICT (account_id, day)
            DO UPDATE SET saves = c.saves + 1 WHERE c.saves < %s
            RETURNING saves
            """,  # noqa: S608  (table name from the model, values are parameters)
            [actor.account.pk, today, app_settings.DAILY_SAVE_LIMIT],
        )
        if cursor.fetchone() is None:
            raise _daily_limit_error(actor, today)


def _saves_today(actor: Actor, today: date) -> int:
    row = DailySaveCount.objects.filter(account=actor.account, day=today).values("saves").first()
    return row["saves"] if row else 0


def _lock_dossier(actor: Actor, domain: str, *, create: bool) -> Dossier | None:
    """Lock (creating it if asked) the dossier row of ``domain`` in the actor's account."""
    if create:
        with connection.cursor() as cursor:
            cursor.execute(
                f"""
                INSERT INTO {Dossier._meta.db_table}
                    (account_id, domain, active_note_count, created_at, updated_at)
                VALUES (%s, %s, 0, now(), now())
                ON CONFLICT (account_id, domain) DO NOTHING
                """,  # noqa: S608
                [actor.account.pk, domain],
            )
    return Dossier.objects.select_for_update().filter(account=actor.account, domain=domain).first()


def _set_count(dossier: Dossier, count: int) -> None:
    dossier.active_note_count = count
    dossier.save(update_fields=["active_note_count", "updated_at"])


def _audit(actor: Actor, action: str, domain: str, **ids) -> None:
    AuditEvent.objects.create(
        account=actor.account,
        action=action,
        domain=domain,
        member=actor.member,
        actor=actor.label,
        oauth_application=actor.oauth_application,
        **ids,
    )


def _new_note(
    actor: Actor,
    dossier: Dossier,
    *,
    title: str,
    body: str,
    source_urls: list[str],
    observed_at: date,
    embedded: Embedded,
    text_hash: str,
) -> Note:
    note = Note(
        id=uuid.uuid4(),
        account=actor.account,
        dossier=dossier,
        source_urls=source_urls,
        observed_at=observed_at,
        created_at=timezone.now(),
        member=actor.member,
        oauth_application=actor.oauth_application,
        content_hash=text_hash,
        embedding_model=embedded.model if embedded.vector is not None else "",
        embedding=embedded.vector,
        embedding_status=(
            Note.EmbeddingStatus.READY
            if embedded.vector is not None
            else Note.EmbeddingStatus.PENDING
        ),
    )
    note.seal(title=title, body=body)
    note.save(force_insert=True)
    if embedded.vector is None:
        _enqueue_embedding(note.id)
    return note


def _enqueue_embedding(note_id: uuid.UUID) -> None:
    from prospect_memory import tasks

    tasks.enqueue_embed_note(note_id)


def _view(note: Note, actor: Actor, domain: str) -> NoteView:
    # Attribution comes from the actor, so no query is needed to show it.
    note.member = actor.member
    note.oauth_application = actor.oauth_application
    return NoteView.of(note, domain=domain)


# --- save ----------------------------------------------------------------------------------


def _overlap(
    actor: Actor, dossier: Dossier, new_urls: list[str], embedded: Embedded
) -> tuple[Overlap, int]:
    """Overlap of a new note with the dossier's active notes; also returns their count."""
    provider = embedded.provider
    rows = Note.objects.filter(
        account=actor.account, dossier=dossier, status=Note.Status.ACTIVE
    ).only(
        "id",
        "account_id",
        "title_ciphertext",
        "body_ciphertext",
        "source_urls",
        "observed_at",
        "created_at",
    )
    if embedded.vector is not None:
        rows = rows.annotate(distance=distance_annotation(embedded.vector, embedded.model))
    rows = list(rows.order_by("-observed_at", "-created_at"))
    result = Overlap(problem=embedded.problem)
    wanted = {normalise_url(u): u for u in new_urls}
    excerpt = app_settings.OVERLAP_EXCERPT_CHARS
    for row in rows:
        shared = [wanted[k] for k in (normalise_url(u) for u in row.source_urls) if k in wanted]
        if shared:
            result.shared_sources.append({"note_id": str(row.id), "urls": sorted(set(shared))})
        distance = getattr(row, "distance", None)
        if distance is None:
            result.skipped += 1
            continue
        result.compared += 1
        if distance <= provider.near_duplicate_distance:
            result.near_duplicates.append(
                {
                    "id": str(row.id),
                    "title": row.title,
                    "body": row.body,
                    "distance": round(distance, 4),
                    "source_urls": list(row.source_urls),
                    "observed_at": row.observed_at.isoformat(),
                }
            )
        elif distance <= provider.overlap_distance:
            body = row.body
            result.overlaps.append(
                {
                    "id": str(row.id),
                    "title": row.title,
                    "distance": round(distance, 4),
                    "excerpt": body[:excerpt] + ("…" if len(body) > excerpt else ""),
                }
            )
    result.near_duplicates.sort(key=lambda d: d["distance"])
    result.overlaps.sort(key=lambda d: d["distance"])
    return result, len(rows)


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

    # Refuse early, before paying for an embedding, when a limit is already reached; the
    # authoritative checks run again under the locks below.
    if _saves_today(actor, today) >= app_settings.DAILY_SAVE_LIMIT:
        raise _daily_limit_error(actor, today)
    current = (
        Dossier.objects.filter(account=actor.account, domain=resolved)
        .values_list("active_note_count", flat=True)
        .first()
    )
    if current is not None and current >= app_settings.DOMAIN_NOTE_LIMIT:
        raise _domain_limit_error(resolved, current)

    text = embedding_input(note_input.title, note_input.body)
    embedded = embed_within_budget(text)

    with transaction.atomic():
        _count_daily_save(actor, today)
        dossier = _lock_dossier(actor, resolved, create=True)
        overlap, count = _overlap(actor, dossier, note_input.source_urls, embedded)
        if count >= app_settings.DOMAIN_NOTE_LIMIT:
            raise _domain_limit_error(resolved, count)
        if embedded.vector is None:
            overlap.skipped = count
            overlap.compared = 0
        note = _new_note(
            actor,
            dossier,
            title=note_input.title,
            body=note_input.body,
            source_urls=note_input.source_urls,
            observed_at=note_input.observed_at,
            embedded=embedded,
            text_hash=content_hash(text),
        )
        _set_count(dossier, count + 1)
        _audit(actor, AuditEvent.Action.SAVE, resolved, note_id=note.id)
        UsageEvent.objects.create(
            account=actor.account,
            kind=UsageEvent.Kind.SAVE,
            domain=resolved,
            oauth_application=actor.oauth_application,
            near_duplicate=bool(overlap.near_duplicates),
            shared_source=bool(overlap.shared_sources),
        )

    return SaveResult(
        note=_view(note, actor, resolved),
        note_count=count + 1,
        overlap=overlap,
        embedding_status=note.embedding_status,
    )


# --- metering -------------------------------------------------------------------------------


# One prepared statement: set_config(..., true) turns synchronous commit off for this
# statement's own transaction (or the caller's, inside an atomic block) and no further.
_RECALL_USAGE_SQL = f"""
INSERT INTO {UsageEvent._meta.db_table}
    (account_id, kind, domain, oauth_application_id, from_memory,
     near_duplicate, shared_source, created_at)
SELECT %(account)s::bigint, 'recall', %(domain)s::text, %(client)s::bigint,
       %(from_memory)s::boolean, false, false, now()
  FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed
"""  # noqa: S608  (table name from the model)


def recall_record(*, actor: Actor, recall) -> None:
    """Count an agent's recall for memory health; a fresh dossier means reused from memory.

    A usage row is a statistic, not a record anyone relies on, so it is committed without
    waiting for the WAL flush (``synchronous_commit off`` for this transaction only): recall
    does not pay a disk sync, and a crash can lose at most the last few counts.
    """
    params = {
        "account": actor.account.pk,
        "domain": recall.domain,
        "client": actor.oauth_application.pk if actor.oauth_application else None,
        "from_memory": recall.known and not recall.stale,
    }
    run((_RECALL_USAGE_SQL, params))


# --- compaction ------------------------------------------------------------------------------


def _clean_note_ids(note_ids: object) -> list[uuid.UUID] | None:
    if note_ids is None:
        return None
    if not isinstance(note_ids, list | tuple):
        raise FieldError("note_ids", "note_ids must be a list of note ids (or left out)")
    ids: list[uuid.UUID] = []
    for index, value in enumerate(note_ids):
        try:
            ids.append(uuid.UUID(str(value)) if isinstance(value, str | uuid.UUID) else None)
        except ValueError:
            ids.append(None)
        if ids[-1] is None:
            raise FieldError(f"note_ids[{index}]", f"note_ids[{index}] is not a note id")
    if len(set(ids)) != len(ids):
        raise FieldError("note_ids", "note_ids lists a note more than once")
    return ids


def _clean_expected_count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldError(
            "expected_note_count",
            "expected_note_count must be the whole number note_count from the recall the "
            "merge was built on",
        )
    return value


def dossier_compact(
    *,
    actor: Actor,
    domain: object,
    expected_note_count: object,
    body: object,
    title: object = None,
    note_ids: object = None,
) -> CompactResult:
    """Merge notes of a domain into one; the replaced notes are archived, not deleted."""
    require_module_admin(actor)
    resolved = resolve_domain(domain).domain
    errors: list[FieldError] = []
    cleaned: dict = {}
    for name, clean, value in (
        ("body", clean_body, body),
        ("title", clean_title, title),
        ("expected_note_count", _clean_expected_count, expected_note_count),
        ("note_ids", _clean_note_ids, note_ids),
    ):
        try:
            cleaned[name] = clean(value)
        except FieldError as error:
            errors.append(error)
    raise_field_errors(errors)
    expected, wanted_ids = cleaned["expected_note_count"], cleaned["note_ids"]
    if wanted_ids is not None and len(wanted_ids) < 2:
        raise ValidationFailed(
            "A compaction merges at least two notes; list two or more note_ids or leave "
            "note_ids out to merge every active note.",
            details={"fields": {"note_ids": ["at least two notes"]}},
        )

    text = embedding_input(cleaned["title"], cleaned["body"])
    embedded = embed_within_budget(text)

    with transaction.atomic():
        dossier = _lock_dossier(actor, resolved, create=False)
        active = (
            list(
                Note.objects.filter(
                    account=actor.account, dossier=dossier, status=Note.Status.ACTIVE
                ).order_by("observed_at", "created_at")
            )
            if dossier
            else []
        )
        if len(active) != expected:
            raise NoteCountMismatch(
                f"{resolved} has {len(active)} active notes now, not {expected}: something "
                "changed since your recall. Nothing was compacted. Recall again, rebuild the "
                f"merge from the current notes and pass expected_note_count={len(active)}.",
                details={"domain": resolved, "expected": expected, "current": len(active)},
            )
        if wanted_ids is None:
            replaced = active
        else:
            by_id = {n.id: n for n in active}
            missing = [str(i) for i in wanted_ids if i not in by_id]
            if missing:
                raise NotFound(
                    f"{len(missing)} of note_ids are not active notes of {resolved} in this "
                    "account. Recall again and use the ids it lists.",
                    details={"domain": resolved, "note_ids": missing},
                )
            replaced = [by_id[i] for i in wanted_ids]
        if len(replaced) < 2:
            raise ValidationFailed(
                f"{resolved} has {len(replaced)} active note(s); there is nothing to merge.",
                details={"domain": resolved, "note_count": len(replaced)},
            )

        urls: dict[str, str] = {}
        for note in sorted(replaced, key=lambda n: (n.observed_at, n.created_at)):
            for url in note.source_urls:
                urls.setdefault(normalise_url(url), url)
        merged = _new_note(
            actor,
            dossier,
            title=cleaned["title"],
            body=cleaned["body"],
            source_urls=list(urls.values()),
            observed_at=min(n.observed_at for n in replaced),
            embedded=embedded,
            text_hash=content_hash(text),
        )
        replaced_ids = [n.id for n in replaced]
        Note.objects.filter(account=actor.account, id__in=replaced_ids).update(
            status=Note.Status.ARCHIVED, superseded_by=merged
        )
        compaction = Compaction.objects.create(
            account=actor.account,
            dossier=dossier,
            merged_note=merged,
            replaced_note_ids=replaced_ids,
            expected_note_count=expected,
            member=actor.member,
            oauth_application=actor.oauth_application,
        )
        count = len(active) - len(replaced) + 1
        _set_count(dossier, count)
        _audit(
            actor,
            AuditEvent.Action.COMPACT,
            resolved,
            note_id=merged.id,
            related_note_ids=replaced_ids,
            compaction_id=compaction.id,
        )

    return CompactResult(
        compaction_id=compaction.id,
        note=_view(merged, actor, resolved),
        superseded_note_ids=replaced_ids,
        note_count=count,
    )


def compaction_restore(*, actor: Actor, compaction_id: object) -> RestoreResult:
    """Undo a compaction: the replaced notes come back, the merged note goes."""
    require_module_admin(actor)
    compaction = compaction_for_actor(actor, compaction_id)
    domain = compaction.dossier.domain

    def refuse(reason: str, message: str) -> ValidationFailed:
        return ValidationFailed(
            message, details={"compaction_id": str(compaction.id), "reason": reason}
        )

    with transaction.atomic():
        dossier = _lock_dossier(actor, domain, create=False)
        compaction = Compaction.objects.select_for_update().get(pk=compaction.pk)
        if compaction.restored_at is not None:
            raise refuse("already_restored", "This compaction has already been restored.")
        merged = (
            Note.objects.filter(account=actor.account, pk=compaction.merged_note_id).first()
            if compaction.merged_note_id
            else None
        )
        if merged is None:
            raise refuse(
                "merged_note_deleted",
                "The merged note of this compaction was deleted, and with it the notes it "
                "replaced; there is nothing to restore.",
            )
        if merged.status != Note.Status.ACTIVE:
            raise refuse(
                "merged_note_compacted",
                "The merged note was itself compacted since. Restore the later compaction "
                "first, then this one.",
            )
        archived = list(
            Note.objects.filter(
                account=actor.account,
                id__in=compaction.replaced_note_ids,
                superseded_by=merged,
                status=Note.Status.ARCHIVED,
            )
        )
        count = Note.objects.filter(
            account=actor.account, dossier=dossier, status=Note.Status.ACTIVE
        ).count()
        after = count - 1 + len(archived)
        if after > app_settings.DOMAIN_NOTE_LIMIT:
            limit = app_settings.DOMAIN_NOTE_LIMIT
            raise DomainNoteLimitReached(
                f"Restoring would give {domain} {after} active notes, over the limit of "
                f"{limit}. Delete or compact {after - limit} other note(s) first.",
                details={"domain": domain, "note_count": count, "after": after, "limit": limit},
            )
        restored_ids = [n.id for n in archived]
        Note.objects.filter(account=actor.account, id__in=restored_ids).update(
            status=Note.Status.ACTIVE, superseded_by=None
        )
        merged_id = merged.id
        merged.delete()
        compaction.restored_at = timezone.now()
        compaction.restored_by = actor.member
        compaction.save(update_fields=["restored_at", "restored_by"])
        _set_count(dossier, after)
        _audit(
            actor,
            AuditEvent.Action.RESTORE,
            domain,
            note_id=merged_id,
            related_note_ids=restored_ids,
            compaction_id=compaction.id,
        )
    return RestoreResult(
        compaction_id=compaction.id,
        domain=domain,
        restored_note_ids=restored_ids,
        removed_note_id=merged_id,
        note_count=after,
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
        dossier = _lock_dossier(actor, domain, create=False)
        note = note_for_actor(actor, note_id, lock=True)
        superseded = list(
            Note.objects.filter(account=actor.account, superseded_by=note).values_list(
                "id", flat=True
            )
        )
        note_pk = note.pk
        note.delete()
        count = Note.objects.filter(
            account=actor.account, dossier=dossier, status=Note.Status.ACTIVE
        ).count()
        _set_count(dossier, count)
        _audit(
            actor, AuditEvent.Action.DELETE, domain, note_id=note_pk, related_note_ids=superseded
        )
    return DeleteResult(
        note_id=note_pk, domain=domain, also_deleted_note_ids=superseded, note_count=count
    )


# --- embeddings --------------------------------------------------------------------------------
# Used by the Celery tasks and the backfill command. A retryable provider failure propagates
# (the task retries with backoff); a permanent one marks the note failed.


def _store_embedding(note: Note, vector: list[float], model: str, text_hash: str) -> int:
    """Record a computed embedding unless the note changed or went meanwhile."""
    return Note.objects.filter(pk=note.pk, content_hash=text_hash).update(
        embedding=vector, embedding_model=model, embedding_status=Note.EmbeddingStatus.READY
    )


def notes_embed(notes: list[Note]) -> int:
    """Embed ``notes`` in provider batches and store the vectors. Returns how many stored."""
    provider = get_provider()
    stored = 0
    for start in range(0, len(notes), EMBED_BATCH):
        batch = notes[start : start + EMBED_BATCH]
        texts = [embedding_input(n.title, n.body) for n in batch]
        vectors = provider.embed_documents(texts)
        for note, text, vector in zip(batch, texts, vectors, strict=True):
            stored += _store_embedding(note, vector, provider.model, content_hash(text))
    return stored


def note_embed(*, note_id: object) -> str:
    """Embed one note. Idempotent: a note already embedded for its content and model is skipped."""
    provider = get_provider()
    note = Note.objects.filter(pk=note_id).first()
    if note is None:
        return "gone"
    text = embedding_input(note.title, note.body)
    if (
        note.embedding_status == Note.EmbeddingStatus.READY
        and note.embedding_model == provider.model
        and note.content_hash == content_hash(text)
    ):
        return "current"
    try:
        notes_embed([note])
    except PermanentEmbeddingError as exc:
        logger.error("embedding note %s failed for good: %s", note.pk, exc)
        Note.objects.filter(pk=note.pk).exclude(embedding_status=Note.EmbeddingStatus.READY).update(
            embedding_status=Note.EmbeddingStatus.FAILED
        )
        return "failed"
    return "embedded"


def embeddings_backfill(*, limit: int = 1000) -> int:
    """Embed active notes that are pending or were embedded by another model."""
    provider = get_provider()
    notes = list(
        Note.objects.filter(status=Note.Status.ACTIVE)
        .exclude(embedding_status=Note.EmbeddingStatus.FAILED)
        .exclude(embedding_status=Note.EmbeddingStatus.READY, embedding_model=provider.model)
        .order_by("created_at")[:limit]
    )
    return notes_embed(notes) if notes else 0


def _mark_for_reembedding(rows) -> int:
    return rows.exclude(
        embedding_model=get_provider().model, embedding_status=Note.EmbeddingStatus.READY
    ).update(embedding_status=Note.EmbeddingStatus.PENDING)


def dossier_reembed(*, dossier_id: int) -> int:
    """Re-embed one dossier's notes (archived ones too) with the current model."""
    dossier = Dossier.objects.filter(pk=dossier_id).first()
    if dossier is None:
        return 0
    rows = Note.objects.filter(account_id=dossier.account_id, dossier=dossier)
    _mark_for_reembedding(rows)
    return notes_embed(list(rows.exclude(embedding_status=Note.EmbeddingStatus.READY)))


def account_mark_for_reembedding(*, account_id: int) -> list[int]:
    """Mark an account's notes of another model pending; returns its dossier ids."""
    _mark_for_reembedding(Note.objects.filter(account_id=account_id))
    return list(Dossier.objects.filter(account_id=account_id).values_list("pk", flat=True))


# --- key rotation ------------------------------------------------------------------------------


def notes_reencrypt(*, batch_size: int = 500) -> tuple[int, int]:
    """Re-encrypt every note title and body not yet under the newest key.

    Runs in batches of short transactions with row locks, so it can run while Kit serves
    traffic. Returns ``(notes seen, notes re-encrypted)``. Afterwards older keys can be
    removed from the configuration.
    """
    ring = keyring()
    seen = changed = 0
    last_id = None
    while True:
        with transaction.atomic():
            rows = Note.objects.select_for_update().order_by("id")
            if last_id is not None:
                rows = rows.filter(id__gt=last_id)
            batch = list(rows[:batch_size])
            if not batch:
                break
            for note in batch:
                seen += 1
                current = ring.is_current(note.body_ciphertext) and (
                    not note.title_ciphertext or ring.is_current(note.title_ciphertext)
                )
                if current:
                    continue
                note.seal(title=note.title, body=note.body)
                note.save(update_fields=["title_ciphertext", "body_ciphertext", "body_bytes"])
                changed += 1
            last_id = batch[-1].id
    return seen, changed
