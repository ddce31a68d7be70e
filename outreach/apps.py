from django.apps import AppConfig


class OutreachConfig(AppConfig):
    name = "outreach"
    verbose_name = "Outreach"
    default_auto_field = "django.db.models.BigAutoField"
    #: What the ``moderators`` group may do here (``manage.py sync_moderators_group``):
    #: look up the accounts and members whose research they moderate.
    moderator_permissions = ("view_account", "view_member")

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from outreach.guides import WRITING_GUIDE
        from outreach.mcp.registry import registry
        from pgstatements import adapt_vectors

        registry.register(WRITING_GUIDE)
        connection_created.connect(adapt_vectors, dispatch_uid="pgstatements.adapt_vectors")
