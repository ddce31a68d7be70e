"""Models both memories share: the embedding columns of a row, integrity flags, the
columns of an event (who did it), and usage events.

They belong to the ``prospect_memory`` app (its migrations create them); they live here so
that each memory can use them without importing the other's models.
"""

from __future__ import annotations

from typing import Any, Self

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import VectorField

from outreach.access import Actor
from outreach.models import Account, Member
from pgstatements import new_row
from prospect_memory.core import integrity
from prospect_memory.core.crypto import SealedField, unseal
from prospect_memory.core.embeddings.vectors import MODEL_NAME_MAX_CHARS


class EmbeddingStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class AccountScopedModel(models.Model):
    """A row of one account (it has ``account_id``): Django's own update of a saved row, by
    its primary key, names the account too, so a table distributed by account (docs/
    operations.md, "Distributed by account") finds the row's shard from the statement."""

    class Meta:
        abstract = True

    def _do_update(self, base_qs: models.QuerySet[Any], *args: Any, **kwargs: Any) -> Any:
        # Django's own (its arguments vary by version: passed on as they come).
        scoped = base_qs.filter(account_id=self.account_id)  # type: ignore[attr-defined]
        return super()._do_update(scoped, *args, **kwargs)


def delete_in_account(model: type[models.Model], account_id: int, **lookups: Any) -> int:
    """Delete the rows of ``model`` in one account that match ``lookups``, in one statement
    that names the account (a table distributed by account deletes on one shard); how many.

    Django's ``delete()`` reads and deletes a row's dependents by foreign key alone, and
    the row by its key: the caller deletes the dependents first, the same way. One it
    forgets fails the transaction at its commit (PostgreSQL checks the foreign keys then),
    and never leaves a row that points nowhere."""
    rows = model._base_manager.filter(account_id=account_id, **lookups)
    deleted: int = rows._raw_delete(rows.db)
    return deleted


class EmbeddedModel(models.Model):
    """A row with an embedding of its text, kept by ``prospect_memory.core.embedding_pipeline``.

    A concrete model that declares its own constraints keeps this one with
    ``constraints = [*EmbeddedModel.Meta.constraints, ...]`` in a ``Meta(EmbeddedModel.Meta)``.
    """

    EmbeddingStatus = EmbeddingStatus

    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=MODEL_NAME_MAX_CHARS, blank=True)
    embedding_status = models.CharField(
        max_length=8, choices=EmbeddingStatus.choices, default=EmbeddingStatus.PENDING
    )

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=~Q(embedding_status=EmbeddingStatus.READY)
                | (Q(embedding__isnull=False) & ~Q(embedding_model="")),
                name="%(class)s_ready_embedding_has_vector",
            ),
        ]


class FlaggedModel(models.Model):
    """A row whose text Kit checked when it was written (``core.integrity``, SPEC 15).

    The flags found are sealed like the text they quote; ``flagged_at`` says when they were
    found (null: nothing was, or a person cleared them), so lists of flagged items read one
    clear column.
    """

    integrity_ciphertext = models.BinaryField(null=True, blank=True, editable=False)
    flagged_at = models.DateTimeField(null=True, blank=True)
    #: When a person read the flagged text and cleared its flags: a later scan (a new
    #: detector, ``manage.py integrity_scan``) leaves it alone.
    integrity_reviewed_at = models.DateTimeField(null=True, blank=True)

    integrity_json = SealedField("integrity_ciphertext")

    class Meta:
        abstract = True

    @property
    def flags(self) -> list[integrity.Flag]:
        if not self.integrity_ciphertext:
            return []
        return integrity.loads(self.integrity_json)

    def set_flags(self, flags: list[integrity.Flag], now=None) -> None:
        """Keep ``flags``, the first MAX_FLAGS of them (none: the row is clean); the row's
        key and account must be set."""
        self.integrity_json = integrity.dumps(flags[: integrity.MAX_FLAGS]) if flags else ""
        self.flagged_at = (now or timezone.now()) if flags else None

    def clear_flags(self, now=None) -> None:
        """A person read the text and found it fine."""
        self.set_flags([])
        self.integrity_reviewed_at = now or timezone.now()


def flags_from_row(token: bytes | None, **where) -> list[integrity.Flag]:
    """A row's flags read without a model instance (the hot paths read rows): ``where`` is
    the binding of ``unseal`` but the field (``table``, ``account_id``, ``row_id``, ``ring``)."""
    if not token:
        return []
    return integrity.loads(unseal(token, field="integrity_json", **where))


#: The columns ``set_flags`` and ``clear_flags`` change (for ``save(update_fields=...)``).
FLAG_FIELDS = ["integrity_ciphertext", "flagged_at", "integrity_reviewed_at"]


class AccountEvent(models.Model):
    """Something that happened in an account: through which OAuth client, and when. Events
    hold ids and labels, never content."""

    #: No index of its own: each kind of event has one that starts with the account (its
    #: recent events), which serves the account's lookups and cascades too.
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    @classmethod
    def attribution(cls, by: Actor) -> dict:
        """The columns that say who did it, besides the account."""
        return {"oauth_application": by.oauth_application}

    @classmethod
    def build(cls, by: Actor | str, *, account_id: int | None = None, **fields: Any) -> Self:
        """One event of this kind, done by ``by`` (see :meth:`attribution`) in the actor's
        account, or in ``account_id`` (which Kit's own work must name), not yet written."""
        if account_id is None:
            account_id = by.account.pk
        return new_row(cls, account_id=account_id, **cls.attribution(by), **fields)

    @classmethod
    def record(cls, by: Actor | str, *, account_id: int | None = None, **fields: Any) -> Self:
        """Write one event of this kind (see :meth:`build`)."""
        event = cls.build(by, account_id=account_id, **fields)
        event.save(force_insert=True)
        return event


class AttributedEvent(AccountEvent):
    """An event that also names who did it: the member, kept by name in ``actor`` if the seat
    goes, or Kit itself (consolidation, a layer making room) by a label."""

    member = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor = models.CharField(max_length=254, help_text="The acting user, kept if the seat goes.")

    class Meta(AccountEvent.Meta):
        abstract = True

    @classmethod
    def attribution(cls, by: Actor | str) -> dict:
        """A person or an agent by its actor; Kit's own work by its label."""
        if isinstance(by, str):
            return {"actor": by}
        return {**super().attribution(by), "member": by.member, "actor": by.label}


class UsageEvent(AccountEvent):
    """One agent read or write of a memory, for the memory-health page. No content."""

    class Memory(models.TextChoices):
        PROSPECT = "prospect", "Prospect memory"
        BUSINESS = "business", "Business memory"
        KNOWLEDGE = "knowledge", "Knowledge search"

    class Kind(models.TextChoices):
        RECALL = "recall", "Recall"
        SAVE = "save", "Save"
        STORE = "store", "Store"
        LIST = "list", "List"
        SEARCH = "search", "Search"

    memory = models.CharField(max_length=16, choices=Memory.choices, default=Memory.PROSPECT)
    #: The operation.
    kind = models.CharField(max_length=16, choices=Kind.choices)
    #: What it was about: a company domain, an entry's key, or nothing (a search).
    subject = models.CharField(max_length=253, blank=True)
    #: Recall: the dossier was known and fresh, so the agent could reuse it.
    from_memory = models.BooleanField(default=False)
    #: Save: the new note had a near duplicate / shared a source with a stored note.
    near_duplicate = models.BooleanField(default=False)
    shared_source = models.BooleanField(default=False)

    class Meta(AccountEvent.Meta):
        app_label = "prospect_memory"
        indexes = [models.Index(fields=["account", "created_at"], name="usage_account_time")]

    def __str__(self) -> str:
        return f"{self.memory} {self.kind} {self.subject}".strip()


class Erasure(models.Model):
    """One erasure (SPEC 16): who, when, what kind, and how many rows went; never content.

    Kept when the account goes, so it names the account by id. The subject (a company's
    domain, a member) is kept only as a keyed digest: whether a given domain was erased can
    be checked, but the table does not say which domains were.
    """

    class Kind(models.TextChoices):
        COMPANY = "company", "A company erased"
        MEMBER = "member", "A member left"
        ACCOUNT = "account", "An account erased"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    account_ref = models.BigIntegerField(help_text="The account's id (kept after it goes).")
    subject_digest = models.CharField(max_length=64)
    #: Who asked: a person's username, or Kit's job by its label.
    actor = models.CharField(max_length=254)
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        app_label = "prospect_memory"
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["account_ref", "-created_at"], name="erasure_account")]

    def __str__(self) -> str:
        return f"{self.kind} erasure in account {self.account_ref}"


class RetentionRun(models.Model):
    """One run of the daily retention job: when, and how many rows each rule removed."""

    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    removed = models.JSONField(default=dict)

    class Meta:
        app_label = "prospect_memory"
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"retention run at {self.started_at:%Y-%m-%d %H:%M}"


def flagged_rows() -> dict[str, int]:
    """Rows whose text holds flags no person cleared, by model, across every account (the
    operator's figure, never per account)."""
    from django.apps import apps

    return {
        model._meta.label_lower: model._base_manager.filter(flagged_at__isnull=False).count()
        for model in apps.get_models()
        if issubclass(model, FlaggedModel) and not model._meta.proxy
    }
