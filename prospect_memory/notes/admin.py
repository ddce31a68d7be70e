"""Staff moderation in Django admin. Actions call the services; no rules live here.

Every page and action honours Django's model permissions: a note's decrypted title and
body need ``view_note`` (list columns show ids, domains and dates, never content), deleting
needs ``delete_note``, restoring a compaction the custom ``restore_compaction``. Staff
status alone shows nothing. The ``moderators`` group (``manage.py sync_moderators_group``)
holds exactly what moderation needs.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from outreach.access import Actor
from outreach.errors import KitError
from prospect_memory.core.admin import ReadOnlyAdmin, SealedValuesAdmin
from prospect_memory.core.integrity import readable
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.markdown import render_markdown
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.rules import is_stale, stale_cutoff
from prospect_memory.notes.services.compaction import compaction_restore
from prospect_memory.notes.services.notes import note_delete


class StaleFilter(admin.SimpleListFilter):
    title = "freshness"
    parameter_name = "fresh"

    def lookups(self, request, model_admin):
        days = notes_settings.STALE_AFTER_DAYS
        return [("fresh", "Fresh"), ("stale", f"Stale (observed over {days} days ago)")]

    def queryset(self, request, queryset):
        cutoff = stale_cutoff()
        if self.value() == "fresh":
            return queryset.filter(observed_at__gte=cutoff)
        if self.value() == "stale":
            return queryset.filter(observed_at__lt=cutoff)
        return queryset


@admin.register(Note)
class NoteAdmin(SealedValuesAdmin):
    deletable = True
    list_display = [
        "id",
        "account",
        "domain",
        "status",
        "observed_at",
        "stale",
        "embedding_status",
        "created_at",
    ]
    list_filter = [
        "status",
        StaleFilter,
        ("flagged_at", admin.EmptyFieldListFilter),
        "embedding_status",
        "account",
    ]
    search_fields = ["dossier__domain", "=id"]
    list_select_related = ["account", "dossier"]
    date_hierarchy = "created_at"
    fields = [
        "id",
        "account",
        "domain",
        "status",
        "decrypted_title",
        "decrypted_body",
        "sources",
        "observed_at",
        "created_at",
        "member",
        "oauth_application",
        "superseded_by",
        "embedding_status",
        "embedding_model",
        "flagged_at",
        "decrypted_flags",
    ]
    readonly_fields = fields
    sealed_fields = {
        "decrypted_title": "prospect_memory.view_note",
        "decrypted_body": "prospect_memory.view_note",
        "decrypted_flags": "prospect_memory.view_note",
    }
    actions = ["delete_notes"]

    @admin.display(ordering="dossier__domain")
    def domain(self, note):
        return note.dossier.domain

    @admin.display(boolean=True)
    def stale(self, note):
        return is_stale(note.observed_at)

    @admin.display(description="Title")
    def decrypted_title(self, note):
        return readable(note.title) or "—"

    @admin.display(description="Body")
    def decrypted_body(self, note):
        return render_markdown(note.body)

    @admin.display(description="Sources")
    def sources(self, note):
        return format_html_join(
            "",
            '<div><a href="{}" rel="noopener noreferrer" target="_blank">{}</a></div>',
            ((url, url) for url in note.source_urls),
        )

    def delete_model(self, request, obj):
        try:
            note_delete(actor=Actor.for_staff(request.user, obj.account), note_id=obj.pk)
        except KitError as error:
            self.message_user(request, error.message, messages.ERROR)

    @admin.action(
        description="Delete selected notes (with an audit event each)",
        permissions=["delete"],
    )
    def delete_notes(self, request, queryset):
        deleted = 0
        for note in queryset.select_related("account"):
            try:
                note_delete(actor=Actor.for_staff(request.user, note.account), note_id=note.pk)
                deleted += 1
            except KitError as error:
                self.message_user(request, f"{note.pk}: {error.message}", messages.WARNING)
        self.message_user(request, f"Deleted {deleted} note(s).", messages.SUCCESS)


@admin.register(Compaction)
class CompactionAdmin(ReadOnlyAdmin):
    list_display = ["id", "account", "domain", "replaced", "created_at", "restored_at"]
    list_filter = ["account", ("restored_at", admin.EmptyFieldListFilter)]
    search_fields = ["dossier__domain", "=id"]
    list_select_related = ["account", "dossier"]
    fields = [
        "id",
        "account",
        "domain",
        "merged",
        "replaced_notes",
        "expected_note_count",
        "member",
        "oauth_application",
        "created_at",
        "restored_at",
        "restored_by",
    ]
    readonly_fields = fields
    actions = ["restore"]

    @admin.display(ordering="dossier__domain")
    def domain(self, compaction):
        return compaction.dossier.domain

    @admin.display(description="Notes replaced")
    def replaced(self, compaction):
        return len(compaction.replaced_note_ids)

    @admin.display(description="Merged note")
    def merged(self, compaction):
        if not compaction.merged_note_id:
            return "— (removed by a restore or deleted)"
        url = reverse("admin:prospect_memory_note_change", args=[compaction.merged_note_id])
        return format_html('<a href="{}">{}</a>', url, compaction.merged_note_id)

    @admin.display(description="Replaced notes")
    def replaced_notes(self, compaction):
        notes = Note.objects.filter(account=compaction.account, id__in=compaction.replaced_note_ids)
        found = {n.id: n for n in notes}
        return format_html_join(
            "",
            "<div>{}</div>",
            (
                (
                    format_html(
                        '<a href="{}">{}</a> ({})',
                        reverse("admin:prospect_memory_note_change", args=[note_id]),
                        note_id,
                        found[note_id].get_status_display(),
                    )
                    if note_id in found
                    else format_html("{} (deleted)", note_id),
                )
                for note_id in compaction.replaced_note_ids
            ),
        )

    def has_restore_permission(self, request) -> bool:
        return request.user.has_perm("prospect_memory.restore_compaction")

    @admin.action(
        description="Restore selected compactions (bring the replaced notes back)",
        permissions=["restore"],
    )
    def restore(self, request, queryset):
        for compaction in queryset.select_related("account"):
            try:
                result = compaction_restore(
                    actor=Actor.for_staff(request.user, compaction.account),
                    compaction_id=compaction.pk,
                )
            except KitError as error:
                self.message_user(request, f"{compaction.pk}: {error.message}", messages.ERROR)
            else:
                self.message_user(
                    request,
                    f"Restored {len(result.restored_note_ids)} note(s) on {result.domain}.",
                    messages.SUCCESS,
                )


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "action",
        "domain",
        "note_id",
        "actor",
        "oauth_application",
    ]
    list_filter = ["action", "account"]
    search_fields = ["domain", "actor", "=note_id", "=compaction_id"]
    list_select_related = ["account", "oauth_application"]
    date_hierarchy = "created_at"


@admin.register(Dossier)
class DossierAdmin(ReadOnlyAdmin):
    list_display = ["domain", "account", "active_note_count", "updated_at"]
    list_filter = ["account"]
    search_fields = ["domain"]
    list_select_related = ["account"]
