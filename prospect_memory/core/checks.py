"""System checks: fail early on unusable keys, an unknown provider or a missing pgvector."""

from __future__ import annotations

from django.core.checks import Error, Tags, Warning, register
from django.db import connections

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
    from prospect_memory.core.embeddings import PROVIDERS, ProviderUnavailable, provider_class

    name = core_settings.EMBEDDING_PROVIDER
    try:
        provider = provider_class(name)
    except ImportError as exc:
        return [
            Error(
                f"embedding provider {name!r} cannot be imported: {exc}",
                hint=f"Set PROSPECT_MEMORY_EMBEDDING_PROVIDER to one of {', '.join(PROVIDERS)} "
                "or to a provider class's dotted path.",
                id="prospect_memory.E002",
            )
        ]
    try:
        built = provider(**core_settings.EMBEDDING_OPTIONS)  # no network, no model loaded
    except (TypeError, ValueError) as exc:
        return [
            Error(
                f"embedding provider {name!r} cannot be built from EMBEDDING_OPTIONS: {exc}",
                hint="Check PROSPECT_MEMORY['EMBEDDING_OPTIONS'] (or the JSON in "
                "PROSPECT_MEMORY_EMBEDDING_OPTIONS) against the provider's options in "
                "docs/embeddings.md.",
                id="prospect_memory.E004",
            )
        ]
    try:
        built.thresholds  # noqa: B018  (options that disagree with the files are refused)
    except ValueError as exc:
        return [
            Error(
                str(exc),
                hint="Check near_duplicate_distance and overlap_distance in "
                "PROSPECT_MEMORY_EMBEDDING_OPTIONS (docs/embeddings.md).",
                id="prospect_memory.E004",
            )
        ]
    try:
        built.verify()
    except ProviderUnavailable as exc:
        return [
            Error(
                str(exc),
                hint="The model and tokenizer files must be the ones the model's manifest "
                "pins by SHA-256 (docs/embeddings.md); Kit never runs another file.",
                id="prospect_memory.E006",
            )
        ]
    return []


@register()
def check_thresholds_files(app_configs, **kwargs):
    from prospect_memory.core.embeddings.thresholds import problems

    return [
        Error(
            problem,
            hint="Each model's entry needs near_duplicate and overlap (and may have merge), "
            "cosine distances above 0 and below 2; rerun manage.py calibrate_embeddings "
            "--write, or fix the file. Until then it is left out.",
            id="prospect_memory.E007",
        )
        for problem in problems()
    ]


@register(Tags.security, deploy=True)
def check_hashing_provider_in_production(app_configs, **kwargs):
    from django.conf import settings

    from prospect_memory.core.embeddings import HashingProvider, provider_class

    try:
        hashing = issubclass(provider_class(core_settings.EMBEDDING_PROVIDER), HashingProvider)
    except ImportError:
        return []  # E002 says so
    if hashing and not settings.DEBUG:
        return [
            Warning(
                "the hashing embedding provider serves with DEBUG off: it compares words, "
                "not meaning, so a finding saved in other words is not recognised",
                hint="Unset PROSPECT_MEMORY_EMBEDDING_PROVIDER for the local semantic model, "
                "or configure Gemini (GEMINI_API_KEY).",
                id="prospect_memory.W001",
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
