from django.apps import AppConfig


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Outreach"
    default_auto_field = "django.db.models.BigAutoField"
