from django.apps import AppConfig


class BusinessMemoryConfig(AppConfig):
    name = "prospect_memory.business"
    label = "business_memory"
    verbose_name = "Business memory"
    default_auto_field = "django.db.models.BigAutoField"
    #: What the ``moderators`` group may do here (``manage.py sync_moderators_group``).
    moderator_permissions = (
        "view_entry",
        "delete_entry",
        "view_entryversion",
        "view_evictedentry",
        "restore_evictedentry",
        "view_entryevent",
    )

    def ready(self) -> None:
        from prospect_memory.business import checks, mcp_tools  # noqa: F401  (registers the checks)

        mcp_tools.register()
