"""Deployment checks of Kit's own settings."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def check_development_secrets(app_configs, **kwargs):
    return [
        Warning(
            f"{name} was generated into KIT_DATA_DIR for local use",
            hint=f"Set {name} in the environment of every production process.",
            id="kit.W001",
        )
        for name in getattr(settings, "DEVELOPMENT_SECRETS", [])
    ]
