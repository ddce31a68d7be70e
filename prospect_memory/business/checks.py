"""System checks: business memory's limits must fit the columns that store them, and keep
what the SPEC says they keep."""

from __future__ import annotations

from django.core.checks import Error, register

from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion

_SOURCE_IDS = ("source_pipeline_id", "source_execution_id", "source_step_id")
#: A limit (a BUSINESS_MEMORY key) and the columns whose width bounds it.
_BOUNDED_BY_COLUMNS = {
    "KEY_MAX_CHARS": [(Entry, "key"), (EntryEvent, "key")],
    "SOURCE_ID_MAX_CHARS": [(model, f) for model in (Entry, EntryVersion) for f in _SOURCE_IDS],
}


@register()
def check_limits_fit_the_columns(app_configs, **kwargs):
    errors = []
    for setting, columns in _BOUNDED_BY_COLUMNS.items():
        limit = getattr(business_settings, setting)
        width = min(model._meta.get_field(name).max_length for model, name in columns)
        if limit > width:
            errors.append(
                Error(
                    f"BUSINESS_MEMORY['{setting}'] is {limit}, wider than the columns that "
                    f"store it ({width} characters).",
                    hint=f"Set it to {width} or less, or widen the columns in a migration.",
                    id="business_memory.E001",
                )
            )
    return errors


@register()
def check_history_keeps_a_version(app_configs, **kwargs):
    """SPEC 12: every change keeps the version it replaces; a store that keeps none would
    lose what it overwrote."""
    kept = business_settings.HISTORY_VERSIONS
    if isinstance(kept, int) and kept >= 1:
        return []
    return [
        Error(
            f"BUSINESS_MEMORY['HISTORY_VERSIONS'] is {kept!r}: every change keeps the version "
            "it replaces, so it must be a whole number of at least 1.",
            hint="Set it to 1 or more (20 by default).",
            id="business_memory.E002",
        )
    ]
