"""Staff moderation of business memory in Django admin, under model permissions.

Lists show keys, layers, confidence and dates, never values; a value is decrypted on a
detail page only for staff who may view entries (``view_entry``), whether the page is the
entry's, an evicted entry's or a kept version's (``prospect_memory.core.admin``). Deletes
and restores go through ``restores``, as every other interface's do.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from django.utils.html import format_html

from outreach.access import Actor
from outreach.errors import KitError
from prospect_memory.business.models import (
    ConsolidationRun,
    Entry,
    EntryEvent,
    EntryVersion,
    EvictedEntry,
)
from prospect_memory.business.services.delete import entry_remove
from prospect_memory.business.services.restore import eviction_restore, merge_undo_entry
from prospect_memory.business.templatetags.business_format import pretty_json
from prospect_memory.business.visibility import is_expired, retired
from prospect_memory.core.admin import ReadOnlyAdmin, SealedValuesAdmin, shown
from prospect_memory.core.integrity import readable_value


def _pretty(value) -> str:
    return format_html("<pre>{}</pre>", pretty_json(value))


class ConfidenceFilter(admin.SimpleListFilter):
    title = "confidence"
    parameter_name = "confidence_band"
    bands = {"low": (0, 39), "medium": (40, 69), "high": (70, 100)}

    def lookups(self, request, model_admin):
        return [(name, f"{name} ({low}-{high})") for name, (low, high) in self.bands.items()]

    def queryset(self, request, queryset):
        band = self.bands.get(self.value())
        return queryset.filter(confidence__range=band) if band else queryset


class ExpiryFilter(admin.SimpleListFilter):
    title = "expiry"
    parameter_name = "expiry"

    def lookups(self, request, model_admin):
        return [("none", "Never expires"), ("later", "Expires later"), ("past", "Expired")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "none":
            return queryset.filter(expires_at__isnull=True)
        if self.value() == "later":
            return queryset.filter(expires_at__gt=now)
        if self.value() == "past":
            return queryset.filter(expires_at__lte=now)
        return queryset


#: Reading a value, on any page that shows one, is reading the entry.
_VALUE_READ = {
    "decrypted_value": "business_memory.view_entry",
    "decrypted_flags": "business_memory.view_entry",
}


class _ShownText:
    """An entry's or a version's free text (its source's ids, its writer's label) as
    readers receive it."""

    shown_source_pipeline_id = shown("source_pipeline_id", "Source pipeline id")
    shown_source_execution_id = shown("source_execution_id", "Source execution id")
    shown_source_step_id = shown("source_step_id", "Source step id")
    shown_written_by_label = shown("written_by_label", "Written by")


_ENTRY_FIELDS = [
    "id",
    "account",
    "layer",
    "member",
    "key",
    "decrypted_value",
    "category",
    "confidence",
    "version",
    "status",
    "expires_at",
    "retired_at",
    "access_count",
    "last_accessed_at",
    "shown_source_pipeline_id",
    "shown_source_execution_id",
    "shown_source_step_id",
    "source_extracted_at",
    "shown_written_by_label",
    "oauth_application",
    "created_at",
    "updated_at",
    "embedding_status",
    "embedding_model",
    "flagged_at",
    "decrypted_flags",
]


@admin.register(Entry)
class EntryAdmin(_ShownText, SealedValuesAdmin):
    deletable = True
    list_display = [
        "key",
        "account",
        "layer",
        "member",
        "category",
        "confidence",
        "version",
        "access_count",
        "expires_at",
        "status",
    ]
    list_filter = [
        "account",
        "layer",
        "category",
        ConfidenceFilter,
        ExpiryFilter,
        ("flagged_at", admin.EmptyFieldListFilter),
        "status",
    ]
    search_fields = ["key", "=id"]
    list_select_related = ["account", "member__user"]
    fields = _ENTRY_FIELDS
    readonly_fields = _ENTRY_FIELDS
    sealed_fields = _VALUE_READ
    actions = ["delete_entries", "undo_merges"]

    @admin.display(description="Value")
    def decrypted_value(self, entry):
        return _pretty(readable_value(entry.value))

    def has_delete_permission(self, request, obj=None):
        # Only what is live can be deleted; evicted and expired entries are purged.
        live = obj is None or (obj.status == Entry.Status.LIVE and not is_expired(obj))
        return live and super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs, request):
        # An entry's versions go with it (the service deletes them): no permission of their
        # own is needed, and staff never delete versions alone.
        deleted, counts, _, protected = super().get_deleted_objects(objs, request)
        return deleted, counts, set(), protected

    def delete_model(self, request, obj):
        try:
            entry_remove(actor=Actor.for_staff(request.user, obj.account), entry=obj)
        except KitError as error:
            # Django would log a deletion and say it succeeded.
            raise PermissionDenied(error.message) from None

    def _delete(self, request, entry) -> bool:
        try:
            entry_remove(actor=Actor.for_staff(request.user, entry.account), entry=entry)
        except KitError as error:
            self.message_user(request, f"{entry.key}: {error.message}", messages.ERROR)
            return False
        return True

    def has_undo_merge_permission(self, request) -> bool:
        return request.user.has_perm("business_memory.undo_merge_entry")

    @admin.action(
        description="Undo the merge of selected entries (consolidation)",
        permissions=["undo_merge"],
    )
    def undo_merges(self, request, queryset):
        for entry in queryset.select_related("account").filter(status=Entry.Status.MERGED):
            try:
                merge_undo_entry(actor=Actor.for_staff(request.user, entry.account), entry=entry)
            except KitError as error:
                self.message_user(request, f"{entry.key}: {error.message}", messages.ERROR)
            else:
                self.message_user(request, f"{entry.key} is an entry of its own again.")

    @admin.action(
        description="Delete selected entries (with an event each)", permissions=["delete"]
    )
    def delete_entries(self, request, queryset):
        deleted = sum(
            self._delete(request, e)
            for e in queryset.select_related("account", "member").filter(status="live")
        )
        self.message_user(request, f"Deleted {deleted} entr(y/ies).", messages.SUCCESS)


@admin.register(EvictedEntry)
class EvictedEntryAdmin(_ShownText, SealedValuesAdmin):
    list_display = ["key", "account", "layer", "member", "confidence", "status", "retired_at"]
    list_filter = ["account", "layer", "category", ConfidenceFilter, "status"]
    search_fields = ["key", "=id"]
    list_select_related = ["account", "member__user"]
    fields = _ENTRY_FIELDS
    readonly_fields = _ENTRY_FIELDS
    sealed_fields = _VALUE_READ
    actions = ["restore"]

    def get_queryset(self, request):
        return retired(super().get_queryset(request))

    @admin.display(description="Value")
    def decrypted_value(self, entry):
        return _pretty(readable_value(entry.value))

    def has_restore_permission(self, request) -> bool:
        return request.user.has_perm("business_memory.restore_evictedentry")

    @admin.action(description="Restore selected entries to their layer", permissions=["restore"])
    def restore(self, request, queryset):
        for entry in queryset.select_related("account"):
            try:
                result = eviction_restore(
                    actor=Actor.for_staff(request.user, entry.account), entry_id=entry.pk
                )
            except KitError as error:
                self.message_user(request, f"{entry.key}: {error.message}", messages.ERROR)
            else:
                gone = ", ".join(e["key"] for e in result.evicted)
                note = f"; {gone} evicted to make room" if gone else ""
                self.message_user(request, f"Restored {entry.key}{note}.", messages.SUCCESS)


_VERSION_FIELDS = [
    "entry",
    "account",
    "version",
    "decrypted_value",
    "category",
    "confidence",
    "strategy",
    "shown_source_pipeline_id",
    "shown_source_execution_id",
    "shown_source_step_id",
    "source_extracted_at",
    "shown_written_by_label",
    "oauth_application",
    "written_at",
    "decrypted_flags",
]


@admin.register(EntryVersion)
class EntryVersionAdmin(_ShownText, SealedValuesAdmin):
    list_display = ["entry", "version", "account", "category", "confidence", "written_at"]
    list_filter = ["account", "category", ConfidenceFilter]
    search_fields = ["entry__key"]
    list_select_related = ["entry", "account"]
    fields = _VERSION_FIELDS
    readonly_fields = _VERSION_FIELDS
    sealed_fields = _VALUE_READ

    @admin.display(description="Value")
    def decrypted_value(self, version):
        return _pretty(readable_value(version.value))


@admin.register(EntryEvent)
class EntryEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "account", "action", "layer", "key", "version", "actor"]
    list_filter = ["action", "layer", "account"]
    search_fields = ["key", "actor", "=entry_id"]
    list_select_related = ["account"]
    date_hierarchy = "created_at"


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(ReadOnlyAdmin):
    list_display = ["started_at", "account", "purged", "demoted", "merged", "finished_at"]
    list_filter = ["account"]
    list_select_related = ["account"]
    date_hierarchy = "started_at"
