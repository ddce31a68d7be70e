"""Business memory: entries of an account's shared layer and of each member's own layer.

A value is stored only as ciphertext bound to its account, entry and field
(``prospect_memory.core.crypto.SealedField``), and so is every kept version. Rules live in
``rules``, ``store``, ``restores`` and ``selectors``; the database holds what must never break: one
live entry per key and layer, a member layer belongs to one member, confidence 0 to 100,
keys in their alphabet, an entry that left the live set says when.
"""

from __future__ import annotations

import json
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from outreach.models import Account, Member
from prospect_memory.core.crypto import SealedField
from prospect_memory.core.models import (
    AccountScopedModel,
    AttributedEvent,
    EmbeddedModel,
    EmbeddingStatus,
    FlaggedModel,
)

#: The key alphabet, as stored (input is lower-cased first): the one definition that the
#: database constraint, the rules, the JSON Schema and the pages' hint are built from.
KEY_CHARACTERS = "a-z0-9_.:-"
KEY_PATTERN = rf"^[a-z0-9][{KEY_CHARACTERS}]*$"
KEY_HINT = "a-z, 0-9 and _ . : - (starting with a letter or digit)"
#: Who a consolidation version is by (in versions and events).
CONSOLIDATION = "consolidation"


class Layer(models.TextChoices):
    ACCOUNT = "account", "Account (shared)"
    MEMBER = "member", "Member (own context)"


class EntryStatus(models.TextChoices):
    LIVE = "live", "Live"
    EVICTED = "evicted", "Evicted (over capacity)"
    EXPIRED = "expired", "Expired"
    #: Merged into another entry by consolidation: its key answers for that entry.
    MERGED = "merged", "Merged (an alias)"


class Strategy(models.TextChoices):
    """How a write meets an existing value (and, for history, how a version came about)."""

    OVERWRITE = "overwrite", "Overwrite"
    APPEND = "append", "Append to an array"
    INCREMENT = "increment", "Increment a number"
    MAX = "max", "Keep the larger number"
    MIN = "min", "Keep the smaller number"
    RESTORE = "restore", "Restore of an earlier version"
    DEMOTE = "demote", "Demoted by consolidation (unused)"
    MERGE = "merge", "Merged into another entry by consolidation"
    UNMERGE = "unmerge", "A merge undone"


class Category(models.TextChoices):
    FACT = "fact", "Fact"
    INSIGHT = "insight", "Insight"
    PREFERENCE = "preference", "Preference"
    OUTCOME = "outcome", "Outcome"


def _layer_owner_consistent() -> Q:
    return (Q(layer=Layer.ACCOUNT) & Q(member__isnull=True)) | (
        Q(layer=Layer.MEMBER) & Q(member__isnull=False)
    )


class Shelf(AccountScopedModel):
    """One layer of an account's business memory (the account's, or one member's).

    The lock anchor of its writes: every store, delete and restore in the layer locks this
    row first, so the capacity count and the key's existence are seen in one order.

    It also counts the layer's entries by status, kept exact by the database itself
    (triggers on the entries table, migration 0009, whatever path writes them: a store, a
    cascade, a bulk import), so a store of a new key that has room needs no count of the
    layer. None until counted: a shelf made while its layer already had entries (an
    import) is counted, and the counts written back, by the next store of a new key.
    """

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    layer = models.CharField(max_length=8, choices=Layer.choices)
    member = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    #: Entries whose status is live (an expired one among them until it is marked so).
    live_entries = models.IntegerField(null=True, editable=False)
    #: Entries that left the layer (evicted or expired), kept for RETIRED_KEEP_DAYS.
    left_entries = models.IntegerField(null=True, editable=False)
    #: Live entries with an expiry: any of them may have expired since it was counted.
    expiring_entries = models.IntegerField(null=True, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "layer", "member"],
                nulls_distinct=False,
                name="shelf_unique_layer",
            ),
            models.CheckConstraint(condition=_layer_owner_consistent(), name="shelf_layer_owner"),
        ]

    def __str__(self) -> str:
        return f"{self.layer} shelf of account {self.account_id}"


class Entry(AccountScopedModel, EmbeddedModel, FlaggedModel):
    """One structured record of what the account (or one member) knows."""

    Status = EntryStatus

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The account and the member are found through the layer indexes and the partial
    # ``entry_member`` (an account entry has no member to index): no index of their own.
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    layer = models.CharField(max_length=8, choices=Layer.choices)
    member = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    key = models.CharField(max_length=100)
    value_ciphertext = models.BinaryField()
    value_bytes = models.PositiveIntegerField(help_text="Size of the value as compact JSON.")
    category = models.CharField(max_length=10, choices=Category.choices, default=Category.FACT)
    confidence = models.PositiveSmallIntegerField()
    source_pipeline_id = models.CharField(max_length=200, blank=True)
    source_execution_id = models.CharField(max_length=200, blank=True)
    source_step_id = models.CharField(max_length=200, blank=True)
    source_extracted_at = models.DateTimeField(null=True, blank=True)
    # Who wrote the current version: recorded by Kit, not given by the caller.
    written_by = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    written_by_label = models.CharField(max_length=254, blank=True)
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    version = models.PositiveIntegerField(default=1)
    #: How the current version came about.
    strategy = models.CharField(max_length=10, choices=Strategy.choices)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    access_count = models.BigIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    #: The last read or write by a member or an agent (consolidation's own writes do not
    #: count), and how many idle periods consolidation has charged since: together they
    #: make demotion idempotent.
    # Database defaults too: rows loaded in bulk, or written by the previous release while a
    # migration adds these columns, get them as well.
    used_at = models.DateTimeField(default=timezone.now, db_default=Now())
    idle_periods_charged = models.PositiveSmallIntegerField(default=0, db_default=0)
    #: The last write by a member or an agent (consolidation's versions are not one, nor is
    #: an undone merge): what an entry without an extraction date is stale by.
    written_at = models.DateTimeField(default=timezone.now, db_default=Now())
    #: A person undid its merge: consolidation leaves it apart until it is written again.
    kept_apart = models.BooleanField(default=False, db_default=False)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.LIVE)
    #: When it left the live set (evicted or expired); kept RETIRED_KEEP_DAYS for restore.
    retired_at = models.DateTimeField(null=True, blank=True)
    #: Set by consolidation (status ``merged``): this key answers for another entry of its
    #: layer; the merge can be undone. Deleting that entry deletes its aliases.
    alias_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="aliases",
        db_index=False,  # indexed by ``entry_alias``, aliases only
    )

    value_json = SealedField("value_ciphertext")

    class Meta(EmbeddedModel.Meta):
        verbose_name_plural = "entries"
        permissions = [("undo_merge_entry", "Can undo a merge made by consolidation")]
        ordering = ["-confidence", "key"]
        constraints = [
            *EmbeddedModel.Meta.constraints,
            # A key is one live entry of its layer, or one alias (merged into another).
            models.UniqueConstraint(
                fields=["account", "key"],
                condition=Q(layer=Layer.ACCOUNT, status__in=[EntryStatus.LIVE, EntryStatus.MERGED]),
                name="entry_account_key_live",
            ),
            models.UniqueConstraint(
                fields=["account", "member", "key"],
                condition=Q(layer=Layer.MEMBER, status__in=[EntryStatus.LIVE, EntryStatus.MERGED]),
                name="entry_member_key_live",
            ),
            models.CheckConstraint(condition=_layer_owner_consistent(), name="entry_layer_owner"),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=100),
                name="entry_confidence_range",
            ),
            models.CheckConstraint(condition=Q(key__regex=KEY_PATTERN), name="entry_key_alphabet"),
            models.CheckConstraint(condition=Q(version__gte=1), name="entry_version_positive"),
            models.CheckConstraint(
                condition=(
                    Q(status__in=[EntryStatus.LIVE, EntryStatus.MERGED])
                    & Q(retired_at__isnull=True)
                )
                | (
                    Q(status__in=[EntryStatus.EVICTED, EntryStatus.EXPIRED])
                    & Q(retired_at__isnull=False)
                ),
                name="entry_retired_iff_not_live",
            ),
            models.CheckConstraint(
                condition=Q(status=EntryStatus.MERGED, alias_of__isnull=False)
                | (~Q(status=EntryStatus.MERGED) & Q(alias_of__isnull=True)),
                name="entry_alias_iff_merged",
            ),
        ]
        indexes = [
            models.Index(
                fields=["account", "layer", "member", "status", "key"], name="entry_layer_key"
            ),
            # A member's entries (their seat's cascade) and an entry's aliases: only the
            # rows that have one are indexed, so writing an account entry updates neither.
            models.Index(fields=["member"], name="entry_member", condition=Q(member__isnull=False)),
            models.Index(
                fields=["alias_of"], name="entry_alias", condition=Q(alias_of__isnull=False)
            ),
            models.Index(
                fields=["account", "layer", "member", "status", "-confidence"],
                name="entry_layer_rank",
            ),
            # The entries waiting for a vector, by account: the backfill and the health
            # figures read all of them, a search counts its own account's.
            models.Index(
                fields=["account", "embedding_status"],
                name="entry_account_backlog",
                condition=~Q(embedding_status=EmbeddingStatus.READY),
            ),
            # Ready entries by model: with the backlog above, a search counts the entries
            # it could not compare without reading the others (``uncompared_statements``).
            models.Index(
                fields=["account", "embedding_model"],
                name="entry_ready_model",
                condition=Q(embedding_status=EmbeddingStatus.READY),
            ),
            # The few live entries with an expiry: what a write counts as already gone.
            models.Index(
                fields=["account", "layer", "member", "expires_at"],
                name="entry_expiring",
                condition=Q(status=EntryStatus.LIVE, expires_at__isnull=False),
            ),
            models.Index(
                fields=["account", "-flagged_at"],
                name="entry_flagged",
                condition=Q(flagged_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.layer}:{self.key}"

    @property
    def value(self):
        return json.loads(self.value_json)


class EntryVersion(AccountScopedModel, FlaggedModel):
    """A version an entry had before a change: the 20 newest per entry are kept."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Found through ``entry_history`` and ``entry_version_unique``: no index of their own.
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_index=False)
    entry = models.ForeignKey(
        Entry, on_delete=models.CASCADE, related_name="versions", db_index=False
    )
    version = models.PositiveIntegerField()
    value_ciphertext = models.BinaryField()
    category = models.CharField(max_length=10, choices=Category.choices)
    confidence = models.PositiveSmallIntegerField()
    source_pipeline_id = models.CharField(max_length=200, blank=True)
    source_execution_id = models.CharField(max_length=200, blank=True)
    source_step_id = models.CharField(max_length=200, blank=True)
    source_extracted_at = models.DateTimeField(null=True, blank=True)
    #: How this version came about.
    strategy = models.CharField(max_length=10, choices=Strategy.choices)
    written_by = models.ForeignKey(
        Member, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    written_by_label = models.CharField(max_length=254, blank=True)
    oauth_application = models.ForeignKey(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    written_at = models.DateTimeField()

    value_json = SealedField("value_ciphertext")

    class Meta:
        ordering = ["-version"]
        constraints = [
            models.UniqueConstraint(fields=["entry", "version"], name="entry_version_unique"),
        ]
        indexes = [models.Index(fields=["account", "entry", "-version"], name="entry_history")]

    def __str__(self) -> str:
        return f"version {self.version} of entry {self.entry_id}"

    @property
    def value(self):
        return json.loads(self.value_json)


class Promotion(AccountScopedModel):
    """An entry in its account's knowledge index (SPEC 13), at the version promoted.

    Kept by ``business.services.promotion`` (in a store's own transaction without a broker, else
    after writes commit); knowledge search reads only
    promoted entries that still qualify, so an entry that stops qualifying leaves the
    index at once even before its row here goes.
    """

    entry = models.OneToOneField(
        Entry, primary_key=True, on_delete=models.CASCADE, related_name="promotion"
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField()
    promoted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["account"], name="promotion_account")]

    def __str__(self) -> str:
        return f"promotion of entry {self.entry_id} at version {self.version}"


class ConsolidationRun(models.Model):
    """What one consolidation run did (or, dry, would do) in one account."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Counts of the account's shared layer: members' own contexts are theirs, even in totals.
    purged = models.PositiveIntegerField(default=0)
    demoted = models.PositiveIntegerField(default=0)
    merged = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["account", "-started_at"], name="consolidation_recent")]

    def __str__(self) -> str:
        return f"consolidation of account {self.account_id} at {self.started_at:%Y-%m-%d %H:%M}"


class EvictedEntry(Entry):
    """Entries that left the live set (evicted or expired), for the admin's restore list."""

    class Meta:
        proxy = True
        verbose_name = "evicted or expired entry"
        verbose_name_plural = "evicted or expired entries"
        permissions = [("restore_evictedentry", "Can restore an evicted or expired entry")]


class EntryEvent(AttributedEvent):
    """Who did what to which key. Keys and actors only, never a value."""

    class Action(models.TextChoices):
        STORE = "store", "Store"
        DELETE = "delete", "Delete"
        EVICT = "evict", "Evict"
        RESTORE_VERSION = "restore_version", "Restore a version"
        RESTORE_EVICTION = "restore_eviction", "Restore an eviction"
        DEMOTE = "demote", "Demote (consolidation)"
        MERGE = "merge", "Merge (consolidation)"
        UNMERGE = "unmerge", "Undo a merge"
        #: A writer of the layer cleared the integrity flags of the current version.
        UNFLAG = "unflag", "Clear integrity flags"

    action = models.CharField(max_length=16, choices=Action.choices)
    layer = models.CharField(max_length=8, choices=Layer.choices)
    key = models.CharField(max_length=100)
    entry_id = models.UUIDField(null=True, blank=True)
    version = models.PositiveIntegerField(null=True, blank=True)

    class Meta(AttributedEvent.Meta):
        indexes = [models.Index(fields=["account", "-created_at"], name="entry_event_recent")]

    def __str__(self) -> str:
        return f"{self.action} {self.layer}:{self.key}"
