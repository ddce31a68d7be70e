"""How each gunicorn worker's garbage collector is set (``gunicorn.conf.py`` applies it
once the worker has loaded the application and frozen what loading made).

A request's objects wait in reference cycles for a collection, its body with them, so a
higher first threshold trades memory for CPU: at 50000,20,100 a recall spends 1.8% fewer
instructions, and 400 requests of 1 MB kept about 1.1 GB more at their peak
(docs/operations.md, "What a web worker keeps between requests")."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

#: Python's own thresholds, and Kit's default.
PYTHONS_GC_THRESHOLDS = "700,10,10"


def gc_thresholds(given: str | None) -> tuple[int, int, int]:
    """``KIT_WEB_GC_THRESHOLDS`` (Python's when not given): three whole numbers of 1 or
    more (0 would turn automatic collection off), for ``gc.set_threshold``."""
    if given is None:
        given = PYTHONS_GC_THRESHOLDS
    try:
        numbers = tuple(int(part) for part in given.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != 3 or min(numbers) < 1:
        raise ImproperlyConfigured(
            f"KIT_WEB_GC_THRESHOLDS is {given!r}: give three whole numbers of 1 or more, as "
            f"gc.set_threshold takes them (Python's and Kit's default: {PYTHONS_GC_THRESHOLDS})"
        )
    first, second, third = numbers
    return first, second, third
