"""Settings of a reusable app, and the core's own.

Each part of prospect memory reads its settings from one dict of the Django settings,
merged over its defaults: the core and the notes share ``PROSPECT_MEMORY`` (each declaring
its own keys), business memory reads ``BUSINESS_MEMORY``, knowledge search ``KNOWLEDGE``.
No other module reads ``django.conf.settings`` for app settings. A key no part declares is
a typo: it is refused at first use (``ImproperlyConfigured``) and by the system check
``prospect_memory.E005``, instead of silently leaving the default in place.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

#: The core's keys of ``PROSPECT_MEMORY``: encryption and embeddings.
DEFAULTS: dict[str, Any] = {
    # Encryption at rest: URL-safe base64 256-bit keys, newest first.
    "ENCRYPTION_KEYS": [],
    # Embeddings: a provider (a name of core.embeddings.PROVIDERS or a dotted path to a
    # provider class) and the options it is built with.
    "EMBEDDING_PROVIDER": "semantic",
    "EMBEDDING_OPTIONS": {},
    # Thresholds the operator calibrated (manage.py calibrate_embeddings --write); empty:
    # the ones that ship with Kit (core/embeddings/thresholds.json).
    "EMBEDDING_THRESHOLDS_FILE": "",
    "GEMINI_API_KEY": "",
    "OPENAI_API_KEY": "",
    # How long a save waits for the provider before storing the note as pending.
    "EMBED_TIME_BUDGET_SECONDS": 2.0,
    "EMBEDDING_INPUT_MAX_BYTES": 6 * 1024,
}


class AppSettings:
    """The keys ``defaults`` declares in the settings dict ``name``, merged over them.

    Several parts may declare keys of one dict; ``override_settings`` and the test
    ``settings`` fixture reload every one of them.
    """

    #: Every key declared, by settings dict (what ``unknown_keys`` checks against).
    declared: dict[str, set[str]] = defaultdict(set)

    def __init__(self, name: str, defaults: dict[str, Any]) -> None:
        self._name = name
        self._defaults = defaults
        self._merged: dict[str, Any] | None = None
        AppSettings.declared[name].update(defaults)
        setting_changed.connect(self._reload, weak=False)

    def _load(self) -> dict[str, Any]:
        if self._merged is None:
            user = getattr(settings, self._name, {}) or {}
            # Once every part has declared its keys (the apps are ready), a key none
            # declares is refused at first use, in every process (gunicorn and Celery run
            # no system checks); before that, the system check E005 reports it.
            if apps.ready:
                unknown = sorted(set(user) - AppSettings.declared[self._name])
                if unknown:
                    raise ImproperlyConfigured(
                        f"unknown {self._name} setting(s): {', '.join(unknown)}; the keys "
                        "each part takes are in its conf.py"
                    )
            merged = {
                **self._defaults,
                **{k: v for k, v in user.items() if k in self._defaults},
            }
            if not apps.ready:
                return merged  # read again once the apps are ready, and checked then
            self._merged = merged
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


def unknown_keys() -> dict[str, list[str]]:
    """Keys of the apps' settings dicts that no part declares, by dict."""
    found = {}
    for name, known in AppSettings.declared.items():
        given = getattr(settings, name, {}) or {}
        unknown = sorted(set(given) - known)
        if unknown:
            found[name] = unknown
    return found


core_settings = AppSettings("PROSPECT_MEMORY", DEFAULTS)
