"""The notes' part of the activity page: their audit events (saved, deleted, compacted,
restored, flags cleared), for module admins (SPEC: members see their own context only)."""

from __future__ import annotations

from django.db import models

from outreach.access import Actor, is_module_admin
from prospect_memory.core.activity import Source, columns
from prospect_memory.notes.models import AuditEvent


def events(actor: Actor) -> models.QuerySet:
    found = AuditEvent.objects.filter(account=actor.account)
    return found if is_module_admin(actor) else found.none()


def shape(found: models.QuerySet) -> models.QuerySet:
    return columns(
        found,
        kind="notes",
        subject=models.F("domain"),
        layer=models.Value("", output_field=models.CharField()),
        version=models.Value(None, output_field=models.IntegerField()),
        item=models.F("note_id"),
    )


SOURCE = Source(
    kind="notes",
    events=events,
    shape=shape,
    labels={
        AuditEvent.Action.SAVE: "saved a note about",
        AuditEvent.Action.DELETE: "deleted a note about",
        AuditEvent.Action.COMPACT: "compacted the notes about",
        AuditEvent.Action.RESTORE: "undid a compaction of",
        AuditEvent.Action.UNFLAG: "cleared the flags of a note about",
    },
)
