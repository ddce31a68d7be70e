from django.apps import AppConfig


class ProspectMemoryConfig(AppConfig):
    name = "prospect_memory"
    verbose_name = "Prospect memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from prospect_memory import checks, mcp_tools  # noqa: F401  (registers the checks)

        mcp_tools.register()
