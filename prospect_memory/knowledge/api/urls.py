from django.urls import path

from prospect_memory.knowledge.api import views

urlpatterns = [
    path("search", views.KnowledgeSearchApi.as_view(), name="api-knowledge-search"),
]
