"""The notes' own system checks: a setting a number must be, checked at start rather
than at the first call that reads it."""

from __future__ import annotations

from django.core.checks import Error, register

from prospect_memory.notes.conf import DEFAULTS, notes_settings

#: What each process keeps, by setting: what the number counts, its least, the check's id.
KEPT = {
    "OVERLAP_PAIRS_KEPT": ("how many companies' overlap pairs a process keeps", 0, "E008"),
    "NOTE_ANSWERS_KEPT_BYTES": ("how many bytes of notes' answers a process keeps", 0, "E009"),
    "NOTE_ANSWERS_KEPT_SECONDS": ("how long a process keeps a note's answer", 1, "E010"),
}


@register()
def check_what_a_process_keeps(app_configs, **kwargs):
    """What a process keeps of its recalls (``notes.pairs``, ``notes.answers``), and for
    how long: a whole number of its least or more each."""
    errors = []
    for name, (meaning, least, check_id) in KEPT.items():
        kept = getattr(notes_settings, name)
        if isinstance(kept, int) and not isinstance(kept, bool) and kept >= least:
            continue
        keep_none = " (keep none)" if least == 0 else ""
        errors.append(
            Error(
                f"PROSPECT_MEMORY['{name}'] is {kept!r}: it is {meaning}, so it must be a "
                f"whole number of {least} or more.",
                hint=f"Set it to {least}{keep_none} or more ({DEFAULTS[name]} by default).",
                id=f"prospect_memory.{check_id}",
            )
        )
    return errors
