"""What changed between two versions of an entry's value, in bounded time whatever they hold.

Values are compared as their formatted JSON, line by line, with a patience diff: lines that
occur exactly once on both sides anchor the comparison (their longest increasing run, found
in O(n log n)), the gaps between anchors are compared the same way, and a gap that has no
anchor, or lies deeper than :data:`MAX_DEPTH` levels, is shown as removed then added lines.
Every level of the recursion looks at each line at most once, and all levels together look
at most :data:`WORK_PER_LINE` times per line (then the rest is shown whole), so the cost is
linear in the lines, and the stack never grows past :data:`MAX_DEPTH`. (``difflib`` promises
neither: ``ndiff`` on two 10 KB lists took minutes and overflowed the stack.)

Long runs of unchanged lines are folded to a few lines of context around each change.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from typing import NamedTuple

#: Gaps nested deeper than this are shown whole (removed, then added).
MAX_DEPTH = 6
#: Lines looked at for anchors, all levels together, per line compared.
WORK_PER_LINE = 3
#: Unchanged lines shown before and after each change.
CONTEXT_LINES = 3

ADD, REMOVE, SAME, FOLD = "add", "remove", "same", "fold"


class Change(NamedTuple):
    kind: str  # ADD, REMOVE, SAME, or FOLD for a run of unchanged lines left out
    text: str


def line_changes(old: list[str], new: list[str]) -> list[Change]:
    """Every line of ``old`` and ``new`` once, each said removed, added or the same."""
    out: list[Change] = []
    budget = [WORK_PER_LINE * (len(old) + len(new))]
    _compare(old, 0, len(old), new, 0, len(new), out, 0, budget)
    return out


def folded(changes: list[Change], context: int = CONTEXT_LINES) -> list[Change]:
    """``changes`` with unchanged runs longer than twice ``context`` folded to one line."""
    out: list[Change] = []
    run: list[Change] = []

    def flush(at_start: bool, at_end: bool) -> None:
        keep_before = 0 if at_start else context
        keep_after = 0 if at_end else context
        if len(run) > keep_before + keep_after + 1:
            out.extend(run[:keep_before])
            hidden = len(run) - keep_before - keep_after
            out.append(Change(FOLD, f"{hidden} unchanged line{'s' if hidden != 1 else ''}"))
            out.extend(run[len(run) - keep_after :] if keep_after else [])
        else:
            out.extend(run)
        run.clear()

    seen_change = False
    for change in changes:
        if change.kind == SAME:
            run.append(change)
            continue
        flush(at_start=not seen_change, at_end=False)
        seen_change = True
        out.append(change)
    if seen_change:
        flush(at_start=False, at_end=True)
    return out


def _compare(a, alo, ahi, b, blo, bhi, out: list[Change], depth: int, budget: list[int]) -> None:
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        out.append(Change(SAME, a[alo]))
        alo, blo = alo + 1, blo + 1
    tail: list[Change] = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
        tail.append(Change(SAME, a[ahi]))
    work = (ahi - alo) + (bhi - blo)
    anchors = []
    if depth < MAX_DEPTH and alo < ahi and blo < bhi and budget[0] >= work:
        budget[0] -= work
        anchors = _anchors(a, alo, ahi, b, blo, bhi)
    if anchors:
        for i, j in anchors:
            _compare(a, alo, i, b, blo, j, out, depth + 1, budget)
            out.append(Change(SAME, a[i]))
            alo, blo = i + 1, j + 1
        _compare(a, alo, ahi, b, blo, bhi, out, depth + 1, budget)
    else:
        out.extend(Change(REMOVE, line) for line in a[alo:ahi])
        out.extend(Change(ADD, line) for line in b[blo:bhi])
    out.extend(reversed(tail))


def _anchors(a, alo, ahi, b, blo, bhi) -> list[tuple[int, int]]:
    """Lines found exactly once on each side, in the longest order both sides agree on."""
    in_a = Counter(a[alo:ahi])
    in_b = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1 and in_a.get(b[j]) == 1}
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if a[i] in where_b]
    if not pairs:
        return []
    # Longest increasing run of b-positions (patience sorting): the anchors that keep order.
    tops: list[int] = []  # smallest b-position ending a run of each length
    ends: list[int] = []  # index into pairs of that run's last pair
    back: list[int] = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        length = bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length] = j
            ends[length] = index
        back[index] = ends[length - 1] if length else -1
    run: list[tuple[int, int]] = []
    index = ends[-1]
    while index != -1:
        run.append(pairs[index])
        index = back[index]
    run.reverse()
    return run
