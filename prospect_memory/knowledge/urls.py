from django.urls import path

from prospect_memory.knowledge import views

urlpatterns = [path("search/", views.search_page, name="search")]
