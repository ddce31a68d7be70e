"""Prospect memory's settings: one ``PROSPECT_MEMORY`` dict merged over ``DEFAULTS``.

No other module of the app reads ``django.conf.settings`` for app settings. The limits are
the rules of SPEC section 4; every one can be changed per deployment.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

DEFAULTS: dict[str, Any] = {
    # Encryption at rest: URL-safe base64 256-bit keys, newest first.
    "ENCRYPTION_KEYS": [],
    # Embeddings: a dotted path to a provider class and the options it is built with.
    "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.LocalProvider",
    "EMBEDDING_OPTIONS": {},
    "GEMINI_API_KEY": "",
    "OPENAI_API_KEY": "",
    # How long a save waits for the provider before storing the note as pending.
    "EMBED_TIME_BUDGET_SECONDS": 2.0,
    "EMBEDDING_INPUT_MAX_BYTES": 6 * 1024,
    # Notes.
    "BODY_MAX_BYTES": 10 * 1024,
    "TITLE_MAX_CHARS": 120,
    "SOURCE_URLS_MIN": 1,
    "SOURCE_URLS_MAX": 20,
    "SOURCE_URL_MAX_BYTES": 2 * 1024,
    "OBSERVED_AT_MAX_FUTURE_DAYS": 1,
    # Quotas.
    "DAILY_SAVE_LIMIT": 200,
    "DOMAIN_NOTE_LIMIT": 50,
    # Freshness and housekeeping.
    "STALE_AFTER_DAYS": 30,
    "COMPACTION_SUGGESTED_ABOVE": 8,
    "OVERLAP_PAIR_WINDOW": 20,
    "OVERLAP_EXCERPT_CHARS": 300,
    "RECALL_PAYLOAD_MAX_BYTES": 100 * 1024,
    # Listing notes over the API.
    "LIST_PAGE_SIZE": 20,
    "LIST_PAGE_SIZE_MAX": 100,
    "LIST_PAGE_MAX": 1_000_000,
    # The notes' nearest-neighbour index (pgvector HNSW) for knowledge search: accounts with
    # more active notes than KNOWLEDGE_EXACT_MAX_NOTES are searched through it (fewer are
    # compared exactly: bench/knowledge_bench.py ranked 20,000 notes in a table of 1M in
    # 27 ms p50, faster than the index and never missing); its build parameters, the
    # memory a build may take, and how many candidates a search keeps (README, Performance).
    "KNOWLEDGE_EXACT_MAX_NOTES": 25_000,
    "KNOWLEDGE_INDEX_M": 16,
    "KNOWLEDGE_INDEX_EF_CONSTRUCTION": 64,
    "KNOWLEDGE_INDEX_BUILD_MEMORY_MB": 1024,
    "KNOWLEDGE_INDEX_EF_SEARCH": 400,
}


class AppSettings:
    """The settings dict ``name`` of the Django settings, merged over ``defaults``.

    Unknown keys are refused at first use (a typo fails loudly instead of silently leaving
    the default in place); ``override_settings`` and the test ``settings`` fixture reload it.
    """

    def __init__(self, name: str, defaults: dict[str, Any]) -> None:
        self._name = name
        self._defaults = defaults
        self._merged: dict[str, Any] | None = None
        setting_changed.connect(self._reload, weak=False)

    def _load(self) -> dict[str, Any]:
        if self._merged is None:
            user = getattr(settings, self._name, {}) or {}
            unknown = sorted(set(user) - set(self._defaults))
            if unknown:
                raise ImproperlyConfigured(f"unknown {self._name} setting(s): {unknown}")
            self._merged = {**self._defaults, **user}
        return self._merged

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._load()[name]
        except KeyError:
            raise AttributeError(f"no {self._name} setting {name!r}") from None

    def reload(self) -> None:
        self._merged = None

    def _reload(self, *, setting: str, **kwargs: Any) -> None:
        if setting == self._name:
            self.reload()


app_settings = AppSettings("PROSPECT_MEMORY", DEFAULTS)
