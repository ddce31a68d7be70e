from django.apps import AppConfig


class ProspectMemoryConfig(AppConfig):
    name = "prospect_memory"
    verbose_name = "Prospect memory"
    default_auto_field = "django.db.models.BigAutoField"
    #: What the ``moderators`` group may do here (``manage.py sync_moderators_group``).
    moderator_permissions = (
        "view_note",
        "delete_note",
        "view_compaction",
        "restore_compaction",
        "view_auditevent",
        "view_dossier",
        "view_usageevent",
    )

    def ready(self) -> None:
        from prospect_memory import checks, mcp_tools  # noqa: F401  (registers the checks)

        mcp_tools.register()
