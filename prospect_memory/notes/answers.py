"""What a process keeps of the notes its recalls answered with, and for how long.

Each note a recall gives is decrypted (title, body and its integrity flags), made readable
(a hidden character shown as U+FFFD), its names made readable and its times written out:
about a third of what a web process spends on the recall of a full dossier. So a process
keeps, for each note it last answered with, the answer as it made it, under the note's
account and id, beside the row it made it from: every column the answer is made of (the
three ciphertexts, the source URLs, the dates, the names of who wrote it). A recall that
reads the same row again is given the kept answer itself, with its length in JSON (the
payload cap's measure): read-only (``payloads.ReadOnlyDict``, no caller can change what
the next is given), and fresh for the day of the recall (``rules.freshness``; made fresh
once a day). A row that differs in any column is made again, and its answer replaces the
one kept. Nothing is invalidated, since nothing is
trusted but the row itself: a change made in any process reads as another row.

Unlike ``notes.pairs``, this holds notes' text, as the same process holds the keys that
open every one. An answer is reachable only through the row it was made from, whose
ciphertexts are bound to their account and note (a row of another account, or another
note's ciphertext copied in, never matches), and it is kept for a while only
(``NOTE_ANSWERS_KEPT_SECONDS``, from when it was made, however often it is used): a
company, a member or an account erased leaves every process's memory within that time,
whichever process erased it, since each drops what is older at every recall and, in a
thread of its own, at least every ``SWEEP_SECONDS``. Bounded by
``NOTE_ANSWERS_KEPT_BYTES`` (what each answer and its row take, the oldest dropped first,
one account holding at most half; 0 keeps none). Both are read on every recall. Made under
one keyring: a process whose keys change keeps nothing made under the others; a forked
child keeps nothing of its parent's.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, cast

from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.kept import Places
from prospect_memory.notes.payloads import ReadOnlyDict, json_size, read_only, with_freshness
from prospect_memory.notes.rules import (
    NOTE_ACCOUNT,
    NOTE_BODY,
    NOTE_CLIENT,
    NOTE_ID,
    NOTE_INTEGRITY,
    NOTE_MEMBER,
    NOTE_OBSERVED,
    NOTE_SOURCES,
    NOTE_TITLE,
    freshness,
)

if TYPE_CHECKING:
    from prospect_memory.core.crypto import Keyring

#: What a kept answer costs beyond the texts :func:`_size` counts (the answer's dicts, the
#: entry, its key, the row's tuple, the dates and times), and what each of its flags does
#: beyond its quote and explanation: a test keeps the count above what ``tracemalloc``
#: measures, for plain notes and for notes of ten flags.
ENTRY_OVERHEAD_BYTES = 2048
FLAG_OVERHEAD_BYTES = 512

#: How often a process's own thread drops the answers kept too long, recalls or not.
SWEEP_SECONDS = 30.0

Key = tuple[int, str]  # account, note id


@dataclass(slots=True)
class _Entry:
    row: tuple
    answer: ReadOnlyDict  # fresh for ``day``: handed out as it is
    size: int  # the answer's length in JSON
    day: tuple[date, date]  # the day it is fresh for, and that day's stale cutoff
    made: float  # on the clock below


@dataclass(slots=True)
class _Totals:
    ring: Keyring | None = None  # the keyring every kept answer was opened with
    sweeping: bool = False  # whether this process's sweeping thread runs


_kept: Places[Key, _Entry] = Places()  # at what each takes, the oldest made first
_totals = _Totals()
_lock = threading.Lock()
_wake = threading.Event()  # the sweeping thread sweeps at once (tests)
_clock = time.monotonic  # the time that answers are kept by (tests move it)


def note_answers(
    rows: list[tuple], *, today: date, cutoff: date, ring: Keyring, make: Callable[[tuple], dict]
) -> tuple[list[dict], list[int]]:
    """The answers of the recall statement's ``rows``, in order, and the length of each in
    JSON. Each is read-only, fresh for ``today``: the one kept where its row is the same
    (made fresh for the day once a day), the others made by ``make`` and kept."""
    answers: list[ReadOnlyDict | None] = []
    sizes: list[int] = []
    missing: list[int] = []  # where a row's answer is made
    limit = notes_settings.NOTE_ANSWERS_KEPT_BYTES
    day = (today, cutoff)
    with _lock:
        if _totals.ring is not ring or limit <= 0:
            _kept.clear()
            _totals.ring = ring
        _expire(_clock())
        _kept.within(limit, {row[NOTE_ACCOUNT] for row in rows})  # a bound lowered since
        for row in rows:
            entry = _kept.get((row[NOTE_ACCOUNT], row[NOTE_ID]))
            if entry is not None and entry.row == _comparable(row):
                if entry.day != day:  # a day on, or another stale cutoff: fresh for this one
                    stale, age_days = freshness(row[NOTE_OBSERVED], today=today, cutoff=cutoff)
                    entry.answer = with_freshness(entry.answer, stale=stale, age_days=age_days)
                    entry.size, entry.day = json_size(entry.answer), day
                answers.append(entry.answer)
                sizes.append(entry.size)
            else:
                missing.append(len(answers))
                answers.append(None)
                sizes.append(0)
    for position in missing:  # made unlocked: other threads' recalls go on
        answer = read_only(make(rows[position]))
        answers[position], sizes[position] = answer, json_size(answer)
    if missing and limit > 0:
        made = _clock()
        with _lock:
            if _totals.ring is ring:
                for position in missing:
                    row, answer = rows[position], cast(ReadOnlyDict, answers[position])
                    entry = _Entry(_comparable(row), answer, sizes[position], day, made)
                    _kept.put((row[NOTE_ACCOUNT], row[NOTE_ID]), entry, _size(row, answer), limit)
                _sweep_in_the_background()
    return answers, sizes  # type: ignore[return-value]  # every place filled


def forget(account_id: int | None = None, note_ids: list[str] | None = None) -> None:
    """Keep nothing of ``note_ids`` of the account, of every note of the account without
    them, of any account without one (tests, benchmarks)."""
    with _lock:
        if account_id is None:
            _kept.clear()
            return
        own = _kept.of_account(account_id)
        for key in own if note_ids is None else [(account_id, i) for i in note_ids]:
            _kept.drop(key)


def kept_bytes() -> int:
    """What the kept answers take, as they are counted against the bound."""
    return _kept.cost


def _comparable(row: tuple) -> tuple:
    """The row as it is compared with a kept one: its source URLs (a list) as a tuple."""
    return (*row[:NOTE_SOURCES], tuple(row[NOTE_SOURCES]), *row[NOTE_SOURCES + 1 :])


def _size(row: tuple, answer: dict) -> int:
    """What keeping ``answer`` made from ``row`` takes: its texts and the row's (the
    ciphertexts, URLs and names), each flag with its quote and explanation, and a fixed
    part for the containers."""
    texts = (
        answer["title"],
        answer["body"],
        *(row[at] for at in (NOTE_TITLE, NOTE_BODY, NOTE_MEMBER, NOTE_CLIENT, NOTE_INTEGRITY)),
        *row[NOTE_SOURCES],
    )
    size = ENTRY_OVERHEAD_BYTES + sum(map(sys.getsizeof, filter(None, texts)))
    for flag in answer.get("integrity", {}).get("flags", ()):
        size += (
            FLAG_OVERHEAD_BYTES + sys.getsizeof(flag["text"]) + sys.getsizeof(flag["explanation"])
        )
    return size


def _expire(now: float) -> None:
    """Drop every answer kept longer than the settings allow (the lock held)."""
    oldest = now - notes_settings.NOTE_ANSWERS_KEPT_SECONDS
    while (key := _kept.first()) is not None and cast(_Entry, _kept.get(key)).made <= oldest:
        _kept.drop(key)


def _sweep_in_the_background() -> None:
    """Start this process's sweeping thread, once it keeps something (the lock held)."""
    if not _totals.sweeping:
        _totals.sweeping = True
        threading.Thread(target=_sweep, name="kept-answers-sweep", daemon=True).start()


def _sweep() -> None:
    while True:
        _wake.wait(SWEEP_SECONDS)
        _wake.clear()
        with _lock:
            _expire(_clock())


def _in_a_forked_child() -> None:
    """A child keeps nothing of its parent's, and has no sweeping thread yet."""
    global _lock, _wake
    _lock, _wake = threading.Lock(), threading.Event()
    _kept.clear()
    _totals.ring, _totals.sweeping = None, False


os.register_at_fork(after_in_child=_in_a_forked_child)
