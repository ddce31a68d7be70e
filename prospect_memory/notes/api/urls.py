from django.urls import path

from prospect_memory.notes.api import views

urlpatterns = [
    path("recall", views.DossierRecallApi.as_view(), name="api-recall"),
    path("notes", views.NotesApi.as_view(), name="api-notes"),
    path("notes/<str:note_id>", views.NoteDeleteApi.as_view(), name="api-note"),
    path("notes/<str:note_id>/unflag", views.NoteUnflagApi.as_view(), name="api-note-unflag"),
    path("compactions", views.DossierCompactApi.as_view(), name="api-compactions"),
    path(
        "compactions/<str:compaction_id>/restore",
        views.CompactionRestoreApi.as_view(),
        name="api-compaction-restore",
    ),
]
