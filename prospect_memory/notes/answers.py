"""What a process keeps of the notes its recalls answered with.

Each note a recall gives is decrypted (title, body and its integrity flags), made readable
(a hidden character shown as U+FFFD), its names made readable and its times written out:
40% of the instructions a web process spends on the recall of a full dossier. So a process
keeps, for each note it last answered with, the answer as it made it, under the note's
account and id, beside the row it made it from: every column the answer is made of (the
three ciphertexts, the source URLs, the dates, the names of who wrote it). A recall that
reads the same row again is given a copy of the kept answer, its freshness (``stale``,
``age_days``) worked out for the day of the recall; a row that differs in any column is
made again, and its answer replaces the one kept. Nothing is invalidated, since nothing is
trusted but the row itself: a change made in any process reads as another row.

Unlike ``notes.pairs``, this holds notes' text, as the same process holds the keys that
open every one. An answer is reachable only through the row it was made from, whose
ciphertexts are bound to their account and note (a row of another account, or another
note's ciphertext copied in, never matches). The process that erases a company or an
account drops their answers at commit, and remembers what it erased, so a recall that read
them before the erasure (or from a replica behind it) does not keep them again; in another
process they stay, unreachable, until newer answers push them out. Bounded by
``NOTE_ANSWERS_KEPT_BYTES``, read on every recall (what each answer and its row take, the
least recently used dropped first, one account holding at most half; 0 keeps none). Made
under one keyring: a process whose keys change keeps nothing made under the others.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import cast

from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.payloads import note_answer_copy

#: What a kept answer costs beyond the objects :func:`_size` counts: the entry, its key and
#: the row's tuple, the dates (a test keeps the count above what ``tracemalloc`` measures).
ENTRY_OVERHEAD_BYTES = 1024

#: How many erased notes and accounts a process remembers (the newest), so that a recall
#: under way during their erasure does not keep them again.
ERASED_REMEMBERED = 65_536

#: Where the recall statement's row holds the note's id, its account and the day it was
#: observed (``selectors._recall_notes_statement``).
_ID, _ACCOUNT, _OBSERVED = 0, 1, 5

Key = tuple[int, str]  # account, note id


@dataclass(frozen=True, slots=True)
class _Entry:
    row: tuple
    answer: dict
    size: int


@dataclass(slots=True)
class _Totals:
    ring: object = None  # the keyring every kept answer was opened with
    bytes: int = 0  # what every kept answer takes


_entries: dict[Key, _Entry] = {}  # the least recently used first
# Each account's keys in the same order and what they take: holding an account to its
# share looks at its own keys only.
_by_account: dict[int, dict[Key, None]] = {}
_account_bytes: dict[int, int] = {}
_totals = _Totals()
# Erased notes and accounts, the oldest first: never kept again.
_erased_notes: dict[Key, None] = {}
_erased_accounts: dict[int, None] = {}
_lock = threading.Lock()


def note_answers(
    rows: list[tuple], *, today: date, cutoff: date, ring: object, make: Callable[[tuple], dict]
) -> list[dict]:
    """The answers of the recall statement's ``rows``, in order, each the recall's own: a
    copy of the one kept where its row is the same, with its freshness for ``today``; the
    others made by ``make`` and kept."""
    answers: list[dict | None] = []
    missing: list[int] = []  # where a row's answer is made
    limit = notes_settings.NOTE_ANSWERS_KEPT_BYTES
    with _lock:
        if _totals.ring is not ring or limit <= 0:
            _clear()
            _totals.ring = ring
        _within(limit, {row[_ACCOUNT] for row in rows})  # a bound lowered since
        for row in rows:
            entry = _entries.get((row[_ACCOUNT], row[_ID]))
            if entry is not None and entry.row == _comparable(row):
                _touch((row[_ACCOUNT], row[_ID]))
                observed = row[_OBSERVED]
                stale, age_days = observed < cutoff, (today - observed).days
                answers.append(note_answer_copy(entry.answer, stale=stale, age_days=age_days))
            else:
                missing.append(len(answers))
                answers.append(None)
    for position in missing:  # made unlocked: other threads' recalls go on
        answers[position] = make(rows[position])
    if missing and limit > 0:
        with _lock:
            if _totals.ring is ring:
                for position in missing:
                    row, answer = rows[position], cast(dict, answers[position])
                    _keep((row[_ACCOUNT], row[_ID]), _comparable(row), answer, limit)
                    # The recall's own from now on: what is kept is never handed out.
                    answers[position] = note_answer_copy(
                        answer, stale=answer["stale"], age_days=answer["age_days"]
                    )
    return answers  # type: ignore[return-value]  # every place filled


def forget(account_id: int | None = None, note_ids: list[str] | None = None) -> None:
    """Keep nothing of ``note_ids`` of the account, of every note of the account without
    them; without an account, nothing at all, and remember no erasure (tests, benchmarks)."""
    with _lock:
        if account_id is None:
            _clear()
            _erased_notes.clear()
            _erased_accounts.clear()
            return
        own = _by_account.get(account_id, {})
        for key in [*own] if note_ids is None else [(account_id, i) for i in note_ids]:
            _drop(key)


def erased(account_id: int, note_ids: list[str] | None = None) -> None:
    """``note_ids`` of the account (every note of it without them) were erased: what is
    kept of them is dropped, and they are never kept again."""
    with _lock:
        if note_ids is None:
            _remember(_erased_accounts, account_id)
            for key in [*_by_account.get(account_id, {})]:
                _drop(key)
            return
        for note_id in note_ids:
            _remember(_erased_notes, (account_id, note_id))
            _drop((account_id, note_id))


def kept_bytes() -> int:
    """What the kept answers take, as they are counted against the bound."""
    return _totals.bytes


def _comparable(row: tuple) -> tuple:
    """The row as it is compared with a kept one: its source URLs (a list) as a tuple."""
    return (*row[:4], tuple(row[4]), *row[5:])


def _size(row: tuple, answer: dict) -> int:
    """What keeping ``answer`` made from ``row`` takes: each object of the answer (its
    strings, dicts and lists: the flags and their quotes too) and the row's own (its
    ciphertexts, URLs and names), beside a fixed part."""
    size = ENTRY_OVERHEAD_BYTES + sum(sys.getsizeof(value) for value in row if value)
    size += sum(sys.getsizeof(url) for url in row[4])
    objects = [answer]
    while objects:
        value = objects.pop()
        size += sys.getsizeof(value)
        if isinstance(value, dict):
            objects.extend(value.values())
        elif isinstance(value, list):
            objects.extend(value)
    return size


def _remember(erased: dict, key: object) -> None:
    """Put ``key`` among the erased, the oldest forgotten beyond the bound (the lock held)."""
    erased[key] = None
    if len(erased) > ERASED_REMEMBERED:
        del erased[next(iter(erased))]


def _touch(key: Key) -> None:
    """``key`` as the most recently used (the lock held)."""
    _entries[key] = _entries.pop(key)
    own = _by_account[key[0]]
    del own[key]
    own[key] = None


def _within(limit: int, accounts: set[int]) -> None:
    """All the kept answers within ``limit``, and each of ``accounts`` within its half (the
    lock held)."""
    while _entries and _totals.bytes > limit:
        _drop(next(iter(_entries)))  # the least recently used of all
    for account in accounts:
        own = _by_account.get(account, {})
        while own and _account_bytes[account] > limit // 2:
            _drop(next(iter(own)))


def _keep(key: Key, row: tuple, answer: dict, limit: int) -> None:
    """Keep ``answer`` made from ``row`` under ``key`` (the lock held)."""
    _drop(key)
    if key in _erased_notes or key[0] in _erased_accounts:
        return  # read before its erasure, or from a replica behind it
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


def _drop(key: Key) -> None:
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
