"""The notes' own system checks: a setting a number must be, checked at start rather
than at the first call that reads it."""

from __future__ import annotations

from django.core.checks import Error, register

from prospect_memory.notes.conf import DEFAULTS, notes_settings

#: What each process keeps, by setting: what the number counts, and the check's id.
KEPT = {
    "OVERLAP_PAIRS_KEPT": ("how many companies' overlap pairs a process keeps", "E008"),
    "NOTE_ANSWERS_KEPT_BYTES": ("how many bytes of notes' answers a process keeps", "E009"),
}


@register()
def check_what_a_process_keeps(app_configs, **kwargs):
    """What a process keeps of its recalls (``notes.pairs``, ``notes.answers``): a whole
    number of 0 or more each."""
    errors = []
    for name, (meaning, check_id) in KEPT.items():
        kept = getattr(notes_settings, name)
        if isinstance(kept, int) and not isinstance(kept, bool) and kept >= 0:
            continue
        errors.append(
            Error(
                f"PROSPECT_MEMORY['{name}'] is {kept!r}: it is {meaning}, so it must be a "
                "whole number of 0 or more.",
                hint=f"Set it to 0 (keep none) or more ({DEFAULTS[name]} by default).",
                id=f"prospect_memory.{check_id}",
            )
        )
    return errors
