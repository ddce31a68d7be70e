"""Numbers read from the environment, each checked for its range as the settings load.

A value out of range stops every process at start, naming the variable and what it takes,
rather than passing the start and failing where it is used, or never: ``inf`` seconds of
reuse would serve one reading for ever, ``nan`` or a negative one would quietly reuse
nothing.
"""

from __future__ import annotations

import math
from typing import TypeVar

import environ
from django.core.exceptions import ImproperlyConfigured

N = TypeVar("N", int, float)


def seconds(env: environ.Env, name: str, default: float, *, more_than_zero: bool = False) -> float:
    """A length of time (in the unit its name says): a finite number, 0 or more (more than 0
    where ``more_than_zero``, for a wait that must give its answer a chance)."""
    least = "more than 0" if more_than_zero else "0 or more"
    value = _number(env, name, default, float, f"a finite number, {least}")
    if not math.isfinite(value) or value < 0 or (more_than_zero and value == 0):
        raise _refused(name, value, f"a finite number, {least}", default)
    return value


def whole(env: environ.Env, name: str, default: int, *, least: int = 0) -> int:
    """A count: a whole number of ``least`` or more."""
    value = _number(env, name, default, int, f"a whole number of {least} or more")
    if value < least:
        raise _refused(name, value, f"a whole number of {least} or more", default)
    return value


def _number(env: environ.Env, name: str, default: N, kind: type[N], wanted: str) -> N:
    """The variable as Python reads the number (django-environ's own reading drops what is
    not a digit: ``1e400`` would be 1400, ``inf`` nothing)."""
    given = env.str(name, default=None)
    if given is None or not given.strip():
        return default
    try:
        return kind(given.strip())
    except ValueError:
        raise _refused(name, given, wanted, default) from None


def _refused(name: str, value: object, wanted: str, default: object) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name} is {value!r}: give {wanted} (default: {default})")


#: Python's own garbage-collector thresholds, and Kit's default.
PYTHONS_GC_THRESHOLDS = "700,10,10"
#: Above this a threshold all but turns its generation's collection off (and past
#: 2,147,483,647 ``gc.set_threshold`` refuses it, in each worker, after the start).
GC_THRESHOLD_MOST = 1_000_000


def gc_thresholds(given: str | None) -> tuple[int, int, int]:
    """``KIT_WEB_GC_THRESHOLDS`` (Python's when not given): three whole numbers from 1 (0
    would turn automatic collection off) to :data:`GC_THRESHOLD_MOST`, for each gunicorn
    worker's ``gc.set_threshold`` (``gunicorn.conf.py`` applies them once the worker has
    loaded the application and frozen what loading made).

    A request's objects wait in reference cycles for a collection, its body with them, so
    a higher first threshold trades memory for CPU: at 50000,20,100 a recall spends 1.8%
    fewer instructions, and 400 requests of 1 MB kept about 1.1 GB more at their peak
    (docs/operations.md, "What a web worker keeps between requests")."""
    if given is None:
        given = PYTHONS_GC_THRESHOLDS
    try:
        numbers = tuple(int(part) for part in given.split(","))
    except ValueError:
        numbers = ()
    if len(numbers) != 3 or min(numbers) < 1 or max(numbers) > GC_THRESHOLD_MOST:
        wanted = (
            f"three whole numbers from 1 to {GC_THRESHOLD_MOST:,}, as gc.set_threshold takes them"
        )
        raise _refused("KIT_WEB_GC_THRESHOLDS", given, wanted, PYTHONS_GC_THRESHOLDS)
    first, second, third = numbers
    return first, second, third
