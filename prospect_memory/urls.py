"""Prospect memory's pages: the notes', business memory's, search and the memory health
page."""

from django.urls import include, path

from prospect_memory.core.views import activity_page, health_page

urlpatterns = [
    path("", include("prospect_memory.notes.urls")),
    path("", include("prospect_memory.business.urls")),
    path("", include("prospect_memory.knowledge.urls")),
    path("", include("prospect_memory.lifecycle.urls")),
    path("health/", health_page, name="health"),
    path("activity/", activity_page, name="activity"),
]
