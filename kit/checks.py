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


@register(Tags.security, deploy=True)
def check_public_url(app_configs, **kwargs):
    """Without ``KIT_PUBLIC_URL`` the OAuth issuer, endpoints and resource identifiers are
    read from each request's Host header, whose port ``ALLOWED_HOSTS`` does not check."""
    if settings.KIT_PUBLIC_URL:
        return []
    return [
        Warning(
            "KIT_PUBLIC_URL is not set: OAuth metadata and the Bearer challenge name the "
            "origin each request's Host header claims",
            hint="Set KIT_PUBLIC_URL to Kit's public origin, e.g. https://kit.example.com.",
            id="kit.W002",
        )
    ]
