from django.urls import path

from prospect_memory.lifecycle import views

urlpatterns = [
    path("companies/<str:domain>/erase/", views.company_erase_page, name="company-erase"),
]
