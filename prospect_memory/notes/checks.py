"""The notes' own system checks: a setting a number must be, checked at start rather
than at the first call that reads it."""

from __future__ import annotations

from django.core.checks import Error, register

from prospect_memory.notes.conf import DEFAULTS, notes_settings


@register()
def check_overlap_pairs_kept(app_configs, **kwargs):
    """How many companies' overlap pairs a process keeps (``notes.pairs``)."""
    kept = notes_settings.OVERLAP_PAIRS_KEPT
    if isinstance(kept, int) and not isinstance(kept, bool) and kept >= 0:
        return []
    return [
        Error(
            f"PROSPECT_MEMORY['OVERLAP_PAIRS_KEPT'] is {kept!r}: it is how many companies' "
            "overlap pairs a process keeps, so it must be a whole number of 0 or more.",
            hint=f"Set it to 0 (keep none) or more ({DEFAULTS['OVERLAP_PAIRS_KEPT']} by default).",
            id="prospect_memory.E008",
        )
    ]
