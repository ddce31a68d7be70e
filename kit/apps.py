from django.apps import AppConfig


class KitConfig(AppConfig):
    name = "kit"
    verbose_name = "Kit"

    def ready(self) -> None:
        from kit import checks  # noqa: F401  (registers the deployment checks)
