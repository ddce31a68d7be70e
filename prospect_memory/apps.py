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
        # The shared core's system checks, and the notes' settings, tools and health section
        # (the notes live in this app's ``notes`` package; business memory and knowledge
        # search are apps of their own).
        from prospect_memory.core import checks  # noqa: F401  (registers the checks)
        from prospect_memory.core.activity import register_activity_source
        from prospect_memory.core.health import embeddings_section, register_health_section
        from prospect_memory.core.lifecycle import register_lifecycle
        from prospect_memory.lifecycle import conf as lifecycle_conf  # noqa: F401
        from prospect_memory.lifecycle import health as lifecycle_health
        from prospect_memory.lifecycle import signals
        from prospect_memory.notes import activity, conf, health, lifecycle, mcp_tools  # noqa: F401  (declares the keys)
        from prospect_memory.notes import checks as notes_checks  # noqa: F401  (registers them)

        mcp_tools.register()
        register_activity_source(activity.SOURCE)
        register_health_section(embeddings_section)
        register_health_section(health.section)
        register_health_section(lifecycle_health.section)
        register_lifecycle(lifecycle.LIFECYCLE)
        signals.connect()
