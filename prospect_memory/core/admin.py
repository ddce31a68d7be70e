"""What every memory's Django admin shares: read-only moderation, and one rule for
decrypted values.

A model admin that shows a sealed value (a note's title and body, an entry's or a
version's value) names it in :attr:`SealedValuesAdmin.sealed_fields` with the permission
that reads it: the ``view`` permission of the model the value belongs to (an evicted entry
and a kept version belong to the entry). Staff without it see the row without the value,
whatever admin page they reach it through.
"""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from prospect_memory.core.integrity import readable
from prospect_memory.core.models import UsageEvent


def shown(field: str, description: str):
    """An admin display of a text ``field`` as every reader receives stored text
    (:func:`~prospect_memory.core.integrity.readable`), for a model admin's class body:
    ``shown_written_by_label = shown("written_by_label", "Written by")``."""

    @admin.display(description=description)
    def display(self, row):
        text = getattr(row, field)
        return readable(text) if text else text

    display.__name__ = f"shown_{field}"
    return display


class ReadOnlyAdmin(admin.ModelAdmin):
    """Moderation pages: rows are looked at and acted on through actions, never edited, and
    deleted only where a model says so (``deletable``), under its delete permission."""

    #: Staff with the model's delete permission may delete rows, one at a time through the
    #: memory's own write path (each such admin overrides ``delete_model`` and offers a
    #: delete action that calls it); Django's bulk "delete selected" is never offered.
    deletable = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return self.deletable and super().has_delete_permission(request, obj)

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # it would delete rows without the write path
        return actions


class SealedValuesAdmin(ReadOnlyAdmin):
    #: A displayed field that decrypts a value -> the permission needed to see it.
    sealed_fields: dict[str, str] = {}

    def may_read(self, request, field: str) -> bool:
        permission = self.sealed_fields.get(field)
        return permission is None or request.user.has_perm(permission)

    def get_fields(self, request, obj=None):
        return [f for f in super().get_fields(request, obj) if self.may_read(request, f)]

    def get_readonly_fields(self, request, obj=None):
        return [f for f in super().get_readonly_fields(request, obj) if self.may_read(request, f)]

    @admin.display(description="Integrity flags")
    def decrypted_flags(self, row):
        """A row's integrity flags (SPEC 15), sealed like the text they quote."""
        return flags_html(row.flags)


def flags_html(flags) -> str:
    """A row's integrity flags (SPEC 15) on its admin page: what was found, where, the text."""
    if not flags:
        return "—"
    return format_html(
        "<ul>{}</ul>",
        format_html_join(
            "",
            "<li>{} in <code>{}</code>: <q>{}</q></li>",
            ((f.explanation, f.field, f.shown_text) for f in flags),
        ),
    )


@admin.register(UsageEvent)
class UsageEventAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "account",
        "memory",
        "kind",
        "subject",
        "oauth_application",
        "from_memory",
    ]
    list_filter = ["memory", "kind", "from_memory", "account"]
    list_select_related = ["account", "oauth_application"]
