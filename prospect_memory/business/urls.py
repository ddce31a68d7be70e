from django.urls import path

from prospect_memory.business import views

urlpatterns = [
    path("business-memory/", views.memory_page, name="business-memory"),
    # Not <layer>/new/: "new" is a valid key.
    path("business-memory/new/<str:layer>/", views.entry_new, name="business-entry-new"),
    path("business-memory/<str:layer>/<str:key>/", views.entry_page, name="business-entry"),
    path(
        "business-memory/<str:layer>/<str:key>/edit/",
        views.entry_edit,
        name="business-entry-edit",
    ),
    path(
        "business-memory/<str:layer>/<str:key>/delete/",
        views.entry_delete_page,
        name="business-entry-delete",
    ),
    path(
        "business-memory/<str:layer>/<str:key>/versions/<int:version>/restore/",
        views.version_restore_page,
        name="business-version-restore",
    ),
    path(
        "business-memory/<str:layer>/<str:key>/versions/<int:version>/changes/",
        views.version_changes_page,
        name="business-version-changes",
    ),
    path(
        "business-memory/<str:layer>/<str:key>/review/",
        views.entry_review_page,
        name="business-entry-review",
    ),
    path(
        "business-memory/<str:layer>/<str:key>/unmerge/",
        views.merge_undo_page,
        name="business-merge-undo",
    ),
    path(
        "business-memory/evictions/<uuid:entry_id>/restore/",
        views.eviction_restore_page,
        name="business-eviction-restore",
    ),
]
