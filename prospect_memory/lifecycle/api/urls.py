from django.urls import path

from prospect_memory.lifecycle.api import views

urlpatterns: list = [
    path("export", views.ExportApi.as_view(), name="api-export"),
    path("erasures/company", views.CompanyErasureApi.as_view(), name="api-erase-company"),
]
