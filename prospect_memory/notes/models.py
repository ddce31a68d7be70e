"""Prospect memory: dossiers of research notes per (account, company domain).

Titles and bodies are stored only as ciphertext bound to their account and note
(``prospect_memory.core.crypto.SealedField``). Rules live in ``rules``, ``services`` and
``selectors``; the database holds the invariants that must never break (one dossier per
account and domain, archived notes point at the note that replaced them, a ready embedding
has its vector and model).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from outreach.models import Account, Member
from prospect_memory.core.crypto import SealedField
from prospect_memory.core.models import (
    AccountScopedModel,
    AttributedEvent,
    EmbeddedModel,
    EmbeddingStatus,
    FlaggedModel,
    UsageEvent,
)

__all__ = ["AuditEvent", "Compaction", "DailySaveCount", "Dossier", "Note", "UsageEvent"]


class Dossier(AccountScopedModel):
    """Everything one account knows about one company, and the lock anchor for its writes.

    Saves, compactions, restores and deletes on a domain lock this row first, so the
    per-domain cap and the compaction count check see one order of events.
    """

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="dossiers")
    domain = models.CharField(max_length=253)
    active_note_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["domain"]
        constraints = [
            models.UniqueConstraint(fields=["account", "domain"], name="dossier_unique_domain"),
        ]

    def __str__(self) -> str:
        return self.domain


class DailySaveCount(AccountScopedModel):
    """Saves per account per UTC day, counted atomically for the daily limit."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    saves = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "day"], name="daily_save_count_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.saves} saves on {self.day}"


class NoteStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    ARCHIVED = "archived", "Archived (superseded by a compaction)"


class Note(AccountScopedModel, EmbeddedModel, FlaggedModel):
    """One finding about a company, with its sources and the date it was true."""

    Status = NoteStatus

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="notes")
    dossier = models.ForeignKey(Dossier, on_delete=models.CASCADE, related_name="notes")
    title_ciphertext = models.BinaryField(null=True, blank=True)
    body_ciphertext = models.BinaryField()
    body_bytes = models.PositiveIntegerField(help_text="Size of the body in UTF-8 bytes.")
    source_urls = ArrayField(models.TextField(), default=list)
    observed_at = models.DateField(help_text="When the finding was true.")
    created_at = models.DateTimeField(default=timezone.now, help_text="When Kit stored it.")
    member = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    # A merged note's deletion removes the finding for good, with the notes it replaced.
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="superseded_notes"
    )
    title = SealedField()
    body = SealedField()

    class Meta(EmbeddedModel.Meta):
        ordering = ["-observed_at", "-created_at"]
        constraints = [
            *EmbeddedModel.Meta.constraints,
            models.CheckConstraint(
                condition=(Q(status=NoteStatus.ACTIVE) & Q(superseded_by__isnull=True))
                | (Q(status=NoteStatus.ARCHIVED) & Q(superseded_by__isnull=False)),
                name="note_archived_iff_superseded",
            ),
            models.CheckConstraint(
                condition=Q(status__in=NoteStatus.values), name="note_status_valid"
            ),
        ]
        indexes = [
            models.Index(
                fields=["account", "dossier", "status", "-observed_at"],
                name="note_dossier_active",
            ),
            models.Index(
                fields=["embedding_status"],
                name="note_embedding_backlog",
                condition=~Q(embedding_status=EmbeddingStatus.READY),
            ),
            # Knowledge search counts an account's notes not compared from this alone.
            models.Index(
                fields=["account", "status", "embedding_status", "embedding_model"],
                name="note_account_embedding",
            ),
            # Memory health lists an account's flagged notes (few) from this alone.
            models.Index(
                fields=["account", "-flagged_at"],
                name="note_flagged",
                condition=Q(flagged_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"note {self.pk}"


class Compaction(AccountScopedModel):
    """A merge of several notes into one; kept so the merge can be undone."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    dossier = models.ForeignKey(Dossier, on_delete=models.CASCADE, related_name="compactions")
    merged_note = models.ForeignKey(
        Note, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    replaced_note_ids = ArrayField(models.UUIDField())
    expected_note_count = models.PositiveIntegerField()
    member = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["account", "dossier", "-created_at"], name="compaction_dossier"),
        ]
        permissions = [
            ("restore_compaction", "Can restore a compaction (bring the replaced notes back)")
        ]

    def __str__(self) -> str:
        return f"compaction {self.pk}"


class AuditEvent(AttributedEvent):
    """Who did what to which note. Ids and actor only, never a title or body."""

    class Action(models.TextChoices):
        SAVE = "save", "Save"
        DELETE = "delete", "Delete"
        COMPACT = "compact", "Compact"
        RESTORE = "restore", "Restore"
        #: A module admin cleared the integrity flags of a note (SPEC 15).
        UNFLAG = "unflag", "Clear integrity flags"

    action = models.CharField(max_length=8, choices=Action.choices)
    domain = models.CharField(max_length=253)
    note_id = models.UUIDField(null=True, blank=True)
    related_note_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    compaction_id = models.UUIDField(null=True, blank=True)

    class Meta(AttributedEvent.Meta):
        indexes = [
            models.Index(fields=["account", "-created_at"], name="audit_account_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.note_id or self.compaction_id}"
