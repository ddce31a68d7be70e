from django.contrib import admin
from django.urls import path
from django.views.generic import TemplateView

from kit import views

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
]
