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
        "undo_merge_entry",
        "view_consolidationrun",
        "view_entryevent",
    )

    def ready(self) -> None:
        from prospect_memory.business import (
            activity,
            checks,  # noqa: F401  (registers the checks)
            health,
            lifecycle,
            mcp_tools,
        )
        from prospect_memory.core.activity import register_activity_source
        from prospect_memory.core.health import register_health_section
        from prospect_memory.core.lifecycle import register_lifecycle

        register_health_section(health.section)
        register_activity_source(activity.SOURCE)
        register_lifecycle(lifecycle.LIFECYCLE)
        mcp_tools.register()
