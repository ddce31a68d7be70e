"""System checks: fail early on unusable keys, an unknown provider or a missing pgvector."""

from __future__ import annotations

from django.core.checks import Error, Tags, register
from django.db import connections
from django.utils.module_loading import import_string

from prospect_memory.core.conf import core_settings, unknown_keys
from prospect_memory.core.crypto import KeyConfigurationError, Keyring


@register()
def check_encryption_keys(app_configs, **kwargs):
    try:
        Keyring.from_strings(core_settings.ENCRYPTION_KEYS)
    except KeyConfigurationError as exc:
        return [
            Error(
                str(exc),
                hint="PROSPECT_MEMORY_ENCRYPTION_KEYS takes comma-separated URL-safe base64 "
                "keys of 32 bytes, newest first.",
                id="prospect_memory.E001",
            )
        ]
    return []


@register()
def check_embedding_provider(app_configs, **kwargs):
    path = core_settings.EMBEDDING_PROVIDER
    try:
        provider = import_string(path)
    except ImportError as exc:
        return [
            Error(
                f"embedding provider {path!r} cannot be imported: {exc}",
                hint="Set PROSPECT_MEMORY['EMBEDDING_PROVIDER'] to a provider class path, e.g. "
                "prospect_memory.core.embeddings.LocalProvider.",
                id="prospect_memory.E002",
            )
        ]
    try:
        provider(**core_settings.EMBEDDING_OPTIONS)  # builds a client lazily: no network
    except (TypeError, ValueError) as exc:
        return [
            Error(
                f"embedding provider {path!r} cannot be built from EMBEDDING_OPTIONS: {exc}",
                hint="Check PROSPECT_MEMORY['EMBEDDING_OPTIONS'] (or the JSON in "
                "PROSPECT_MEMORY_EMBEDDING_OPTIONS) against the provider's options in "
                "docs/operations.md.",
                id="prospect_memory.E004",
            )
        ]
    return []


@register(Tags.database)
def check_pgvector_available(app_configs, databases=None, **kwargs):
    errors = []
    for alias in databases or []:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            if cursor.fetchone() is None:
                errors.append(
                    Error(
                        f"the PostgreSQL behind database {alias!r} has no pgvector extension",
                        hint="Install pgvector on that server, or unset DATABASE_URL to use "
                        "Kit's embedded PostgreSQL, which ships it.",
                        id="prospect_memory.E003",
                    )
                )
    return errors


@register()
def check_unknown_settings(app_configs, **kwargs):
    """A key of PROSPECT_MEMORY, BUSINESS_MEMORY or KNOWLEDGE that no part declares is a
    typo: it would silently leave the default in place."""
    return [
        Error(
            f"unknown {name} setting(s): {', '.join(keys)}",
            hint="Check the spelling; the keys each part takes are in its conf.py "
            "(prospect_memory.core.conf, .notes.conf, .business.conf, .knowledge.conf).",
            id="prospect_memory.E005",
        )
        for name, keys in unknown_keys().items()
    ]
