from django.urls import path

from prospect_memory.business.api import views

urlpatterns = [
    path("entries", views.EntriesApi.as_view(), name="api-business-entries"),
    path("entries/<str:key>", views.EntryApi.as_view(), name="api-business-entry"),
    path(
        "entries/<str:key>/history",
        views.EntryHistoryApi.as_view(),
        name="api-business-entry-history",
    ),
    path(
        "entries/<str:key>/versions/<int:version>/restore",
        views.VersionRestoreApi.as_view(),
        name="api-business-version-restore",
    ),
    path(
        "entries/<str:key>/unmerge",
        views.MergeUndoApi.as_view(),
        name="api-business-entry-unmerge",
    ),
    path(
        "entries/<str:key>/unflag",
        views.EntryUnflagApi.as_view(),
        name="api-business-entry-unflag",
    ),
    path("search", views.SearchApi.as_view(), name="api-business-search"),
    path("evictions", views.EvictionsApi.as_view(), name="api-business-evictions"),
    path(
        "evictions/<str:entry_id>/restore",
        views.EvictionRestoreApi.as_view(),
        name="api-business-eviction-restore",
    ),
]
