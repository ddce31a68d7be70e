"""Merging a dossier's notes into one, and undoing a merge."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from outreach.access import Actor, require_module_admin
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.core.integrity import MAX_FLAGS
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import (
    DomainNoteLimitReached,
    NoteCountMismatch,
    NotFound,
    ValidationFailed,
)
from prospect_memory.notes.models import AuditEvent, Compaction, Note
from prospect_memory.notes.records import CompactResult, RestoreResult
from prospect_memory.notes.rules import (
    clean_body,
    clean_expected_count,
    clean_fields,
    clean_note_ids,
    clean_title,
    compaction_suggested,
    embedding_input,
    normalise_url,
    note_flags,
)
from prospect_memory.notes.selectors import active_notes, compaction_for_actor
from prospect_memory.notes.services.dossiers import (
    delete_notes,
    lock_dossier,
    new_note,
    set_count,
    written_note_view,
)


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
    cleaned = clean_fields(
        ("body", clean_body, body),
        ("title", clean_title, title),
        ("expected_note_count", clean_expected_count, expected_note_count),
        ("note_ids", clean_note_ids, note_ids),
    )
    expected, wanted_ids = cleaned["expected_note_count"], cleaned["note_ids"]
    if wanted_ids is not None and len(wanted_ids) < 2:
        problem = (
            "note_ids must list at least two notes (a compaction merges two or more); or "
            "leave note_ids out to merge every active note"
        )
        raise ValidationFailed(f"{problem}.", details={"fields": {"note_ids": [problem]}})

    text = embedding_input(cleaned["title"], cleaned["body"])
    embedded = embed_within_budget(text)
    # The merged note's text is checked before the lock; its sources (the replaced notes',
    # already checked when they were saved) are known only under it.
    agent = actor.oauth_application is not None  # a person's own text is their decision
    text_flags = (
        note_flags(title=cleaned["title"], body=cleaned["body"], source_urls=[]) if agent else []
    )

    with transaction.atomic():
        dossier = lock_dossier(actor, resolved, create=False)
        active = list(active_notes(actor, dossier).order_by("observed_at", "created_at"))
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
        sources = list(urls.values())
        # The sources come from the replaced notes, whoever merges them: their flags (an
        # order spelled in a path, data in a query) come along, checked again here.
        source_flags = note_flags(title="", body="", source_urls=sources)
        merged = new_note(
            actor,
            dossier,
            title=cleaned["title"],
            body=cleaned["body"],
            source_urls=sources,
            observed_at=min(n.observed_at for n in replaced),
            embedded=embedded,
            flags=(text_flags + source_flags)[:MAX_FLAGS],
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
        set_count(dossier, count)
        AuditEvent.record(
            actor,
            action=AuditEvent.Action.COMPACT,
            domain=resolved,
            note_id=merged.id,
            related_note_ids=replaced_ids,
            compaction_id=compaction.id,
        )

    return CompactResult(
        compaction_id=compaction.id,
        note=written_note_view(merged, actor, resolved),
        superseded_note_ids=replaced_ids,
        note_count=count,
        compaction_suggested=compaction_suggested(count),
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
        dossier = lock_dossier(actor, domain, create=False)
        compaction = Compaction.objects.select_for_update().get(pk=compaction.pk)
        if compaction.restored_at is not None:
            raise refuse("already_restored", "This compaction has already been restored.")
        merged = (
            Note.objects.filter(
                account=actor.account, dossier=dossier, pk=compaction.merged_note_id
            ).first()
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
                dossier=dossier,  # the dossier counted and capped below, whatever a row says
                id__in=compaction.replaced_note_ids,
                superseded_by=merged,
                status=Note.Status.ARCHIVED,
            )
        )
        if not archived:
            raise refuse(
                "replaced_notes_gone",
                "The notes this compaction replaced are no longer kept; there is nothing to "
                "restore, and the merged note stays.",
            )
        count = active_notes(actor, dossier).count()
        after = count - 1 + len(archived)
        if after > notes_settings.DOMAIN_NOTE_LIMIT:
            limit = notes_settings.DOMAIN_NOTE_LIMIT
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
        delete_notes(actor.account.pk, [merged_id])
        compaction.restored_at = timezone.now()
        compaction.restored_by = actor.member
        compaction.save(update_fields=["restored_at", "restored_by"])
        set_count(dossier, after)
        AuditEvent.record(
            actor,
            action=AuditEvent.Action.RESTORE,
            domain=domain,
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
