"""What a process keeps of the notes its recalls answered with.

Each note a recall gives is decrypted (title, body and its integrity flags), made readable
(a hidden character shown as U+FFFD), its names made readable and its times written out:
40% of the instructions a web process spends on the recall of a full dossier. So a process
keeps, for each note it last answered with, the answer as it made it, under the note's
account and id, beside the row it made it from: every column the answer is made of (the
three ciphertexts, the source URLs, the dates, the names of who wrote it). A recall that
reads the same row again takes the kept answer, its freshness (``stale``, ``age_days``)
worked out for the day of the recall; a row that differs in any column is made again, and
its answer replaces the one kept. Nothing is invalidated, since nothing is trusted but the
row itself: a change made in any process reads as another row.

Unlike ``notes.pairs``, this holds notes' text, as the same process holds the keys that
open every one. An answer is reachable only through the row it was made from, whose
ciphertexts are bound to their account and note (a row of another account, or another
note's ciphertext copied in, never matches), so what an erasure removed stays here,
unreachable, until it is dropped: the process that erases an account drops its answers at
once, the others as they fill. Bounded by ``NOTE_ANSWERS_KEPT_BYTES`` (what each answer
and its row take, the least recently used dropped first, one account holding at most half;
0 keeps none). Made under one keyring: a process whose keys change keeps nothing made under
the others. Answers are shared between recalls, so they are read and never changed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from prospect_memory.notes.conf import notes_settings

#: What a kept answer costs beyond its texts: the dicts, the key, the row's tuple, the
#: times and the strings of its fixed fields, measured with ``tracemalloc`` (a test keeps
#: the count above what is measured).
ENTRY_OVERHEAD_BYTES = 2048

#: Where the recall statement's row holds the note's id, its account and the day it was
#: observed (``selectors._recall_notes_statement``).
_ID, _ACCOUNT, _OBSERVED = 0, 1, 5


@dataclass(frozen=True, slots=True)
class _Entry:
    row: tuple
    answer: dict
    size: int


_entries: dict[tuple[int, str], _Entry] = {}  # the least recently used first
# Each account's keys in the same order and what they take: holding an account to its
# share looks at its own keys only.
_by_account: dict[int, dict[tuple[int, str], None]] = {}
_account_bytes: dict[int, int] = {}


@dataclass(slots=True)
class _Totals:
    ring: object = None  # the keyring every kept answer was opened with
    bytes: int = 0  # what every kept answer takes


_totals = _Totals()
_lock = threading.Lock()


def note_answers(
    rows: list[tuple], *, today: date, cutoff: date, ring: object, make: Callable[[tuple], dict]
) -> list[dict]:
    """The answers of the recall statement's ``rows``, in order: each kept one whose row is
    the same, with its freshness for ``today``; the others made by ``make`` and kept."""
    answers: list[dict | None] = []
    missing: list[int] = []  # where a row's answer is made
    with _lock:
        if _totals.ring is not ring:
            _clear()
            _totals.ring = ring
        for row in rows:
            entry = _entries.get((row[_ACCOUNT], row[_ID]))
            if entry is not None and entry.row == _comparable(row):
                _touch((row[_ACCOUNT], row[_ID]))
                observed = row[_OBSERVED]
                answer = entry.answer.copy()  # the same keys in the same order
                answer["stale"] = observed < cutoff
                answer["age_days"] = (today - observed).days
                answers.append(answer)
            else:
                missing.append(len(answers))
                answers.append(None)
    for position in missing:  # made unlocked: other threads' recalls go on
        answers[position] = make(rows[position])
    limit = notes_settings.NOTE_ANSWERS_KEPT_BYTES
    if missing and limit > 0:
        with _lock:
            if _totals.ring is ring:
                for position in missing:
                    row = rows[position]
                    key = (row[_ACCOUNT], row[_ID])
                    _keep(key, _comparable(row), answers[position], limit)  # type: ignore[arg-type]
    return answers  # type: ignore[return-value]  # every place filled


def forget(account_id: int | None = None, note_ids: list[str] | None = None) -> None:
    """Keep nothing of ``note_ids`` of the account, of every note of the account without
    them, of any account without one (an erasure, tests, benchmarks)."""
    with _lock:
        if account_id is None:
            _clear()
            return
        own = _by_account.get(account_id, {})
        for key in [*own] if note_ids is None else [(account_id, i) for i in note_ids]:
            _drop(key)


def kept_bytes() -> int:
    """What the kept answers take, as they are counted against the bound."""
    return _totals.bytes


def _comparable(row: tuple) -> tuple:
    """The row as it is compared with a kept one: its source URLs (a list) as a tuple."""
    return (*row[:4], tuple(row[4]), *row[5:])


def _size(row: tuple, answer: dict) -> int:
    texts = (answer["title"], answer["body"], *row[2:4], row[9], *row[4])
    return ENTRY_OVERHEAD_BYTES + sum(sys.getsizeof(text) for text in texts if text)


def _touch(key: tuple[int, str]) -> None:
    """``key`` as the most recently used (the lock held)."""
    _entries[key] = _entries.pop(key)
    own = _by_account[key[0]]
    del own[key]
    own[key] = None


def _keep(key: tuple[int, str], row: tuple, answer: dict, limit: int) -> None:
    """Keep ``answer`` made from ``row`` under ``key`` (the lock held)."""
    _drop(key)
    size = _size(row, answer)
    if size > limit // 2:
        return  # more than an account's share: never kept
    account = key[0]
    own = _by_account.get(account, {})
    while own and _account_bytes[account] + size > limit // 2:
        _drop(next(iter(own)))  # the account's least recently used: its share is half
    while _entries and _totals.bytes + size > limit:
        _drop(next(iter(_entries)))  # the least recently used of all
    _entries[key] = _Entry(row, answer, size)
    _by_account.setdefault(account, {})[key] = None
    _account_bytes[account] = _account_bytes.get(account, 0) + size
    _totals.bytes += size


def _drop(key: tuple[int, str]) -> None:
    """Keep nothing of ``key`` (the lock held)."""
    entry = _entries.pop(key, None)
    if entry is None:
        return
    account = key[0]
    own = _by_account[account]
    del own[key]
    _account_bytes[account] -= entry.size
    _totals.bytes -= entry.size
    if not own:
        del _by_account[account], _account_bytes[account]


def _clear() -> None:
    _entries.clear()
    _by_account.clear()
    _account_bytes.clear()
    _totals.bytes = 0
