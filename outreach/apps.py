from django.apps import AppConfig


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Outreach"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from outreach import mcp_tools

        mcp_tools.register()
