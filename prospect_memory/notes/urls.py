from django.urls import path

from prospect_memory.notes import views

urlpatterns = [
    path("prospects/<int:prospect_id>/", views.prospect_page, name="prospect"),
    path("companies/", views.company_lookup, name="company-lookup"),
    path("companies/<str:domain>/", views.company_page, name="company"),
    path("companies/<str:domain>/notes/", views.note_list, name="note-list"),
    path("notes/<uuid:note_id>/delete/", views.note_delete_page, name="note-delete"),
    path("notes/<uuid:note_id>/review/", views.note_review_page, name="note-review"),
]
