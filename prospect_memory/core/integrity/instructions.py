"""Text that addresses an AI with instructions, in the five product languages.

The rules (:mod:`.rules`, read from ``rules/*.toml``) are tried only where they can match:
a rule runs when one of its trigger words occurs, a language's rules when the text reads
as that language, and a long text is read in windows around the triggers. Texts and rules
meet in the judged form (:mod:`.normalise`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache

import ahocorasick

from prospect_memory.core.integrity import rules
from prospect_memory.core.integrity.flags import Flag


@cache
def _compiled() -> tuple[tuple[str, ...], list[tuple[str, str, frozenset[str], re.Pattern]]]:
    """Every trigger word once, and the rules with their triggers and compiled patterns.

    A rule is matched against the lower-cased text, not read case-insensitively: Python
    compares every letter both ways under ``IGNORECASE``, which made matching 1.7 times
    slower. The rules are written in lower case; the few that tell cases apart
    (``(?-i:Sie)``) read the text as it is, case-insensitively elsewhere."""
    compiled = [
        (
            rule.language,
            rule.kind,
            frozenset(rule.triggers),
            re.compile(rule.pattern, re.MULTILINE | (re.IGNORECASE if _cased(rule) else 0)),
        )
        for rule in rules.every_rule()
    ]
    triggers = tuple(sorted({t for _, _, words, _ in compiled for t in words}))
    return triggers, compiled


def _cased(rule: rules.Rule) -> bool:
    return "(?-i:" in rule.pattern


@cache
def _read_as_written() -> frozenset[int]:
    """The places (in :func:`_compiled`'s list) of the rules that read the text as it is."""
    return frozenset(i for i, (*_, p) in enumerate(_compiled()[1]) if p.flags & re.IGNORECASE)


@cache
def _caseless(index: int) -> re.Pattern:
    """A rule read case-insensitively, for the rare text whose lower case is longer."""
    return re.compile(_compiled()[1][index][3].pattern, re.MULTILINE | re.IGNORECASE)


@cache
def _rules_of() -> dict[str, tuple[int, ...]]:
    """For each trigger, the rules it starts (their places in :func:`_compiled`'s list)."""
    found: dict[str, list[int]] = {}
    for index, (_, _, triggers, _) in enumerate(_compiled()[1]):
        for trigger in triggers:
            found.setdefault(trigger, []).append(index)
    return {trigger: tuple(indexes) for trigger, indexes in found.items()}


def warm() -> None:
    _compiled()
    _rules_of()
    _read_as_written()
    _automaton()
    _order_words()


_WORD = re.compile(r"\w+")


def _languages(lowered: str, words: set[str]) -> set[str]:
    """The languages whose rules run on a text: English always (injected text is most often
    English), another when two of its function words occur, or one of the words an order
    to an AI in it can hardly do without (a short injected sentence has few function
    words). This only saves time: most research is in one language."""
    found = {"", "en"}
    for language, markers in rules.function_words().items():
        order_words, order_stems = _order_words()[language]
        if (
            len(words & markers) >= 2
            or not words.isdisjoint(order_words)
            or order_stems.search(lowered)
        ):
            found.add(language)
    return found


@cache
def _order_words() -> dict[str, tuple[frozenset[str], re.Pattern]]:
    """Per language: its order words, and its order stems as one pattern (one scan)."""
    return {
        language: (words, re.compile("|".join(map(re.escape, stems))))
        for language, (words, stems) in rules.order_words().items()
    }


@cache
def _automaton() -> tuple[ahocorasick.Automaton, frozenset[str]]:
    """Every trigger in one Aho-Corasick automaton (one pass over a text finds them all),
    and the short ones (up to four letters), which count only at the start of a word:
    "ai" in "AI" and "AI's", not in "said"; "tool" in "tools"."""
    automaton = ahocorasick.Automaton()
    for trigger in _compiled()[0]:
        automaton.add_word(trigger, trigger)
    automaton.make_automaton()
    triggers = _compiled()[0]
    return automaton, frozenset(t for t in triggers if len(t) <= 4 and t.isalpha())


def _occurrences(lowered: str) -> dict[str, list[int]]:
    """Where each trigger occurs in ``lowered`` (a short one only where a word starts)."""
    automaton, short = _automaton()
    found: dict[str, list[int]] = {}
    for end, trigger in automaton.iter(lowered):
        start = end - len(trigger) + 1
        if (
            trigger in short
            and start
            and (lowered[start - 1].isalnum() or lowered[start - 1] == "_")
        ):
            continue
        found.setdefault(trigger, []).append(start)
    return found


#: Texts longer than this are read in windows around each rule's trigger words: every
#: pattern reads at most a sentence or two around the words it needs.
_WINDOWED_ABOVE = 1500
_WINDOW_BEFORE, _WINDOW_AFTER = 400, 600


def _windows(
    text: str, occurrences: dict[str, list[int]], triggers: Iterable[str]
) -> list[tuple[int, int]]:
    """Merged spans of ``text`` around each occurrence of ``triggers``."""
    spans = [
        (max(0, found - _WINDOW_BEFORE), found + len(trigger) + _WINDOW_AFTER)
        for trigger in triggers
        for found in occurrences[trigger]
    ]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return [(start, min(end, len(text))) for start, end in merged]


#: Where a clause starts is not part of what was said.
_LEAD = " \t\r\n.!?:;,-–—*>(\"'„“«|"


def instructions(text: str, field: str) -> Iterator[Flag]:
    """The orders to an AI in ``text`` (in its judged form), each as a flag of ``field``."""
    compiled = _compiled()[1]
    lowered = text.lower()
    occurrences = _occurrences(lowered)
    if not occurrences:
        return
    present = occurrences.keys()
    languages = _languages(lowered, set(_WORD.findall(lowered)))
    same_places = len(lowered) == len(text)
    windowed = len(text) > _WINDOWED_ABOVE and same_places
    seen: set[tuple[int, int]] = set()
    rules_of, as_written = _rules_of(), _read_as_written()
    # The rules a trigger present starts, in their order (of a hundred, a few run).
    for rule in sorted({rule for trigger in present for rule in rules_of[trigger]}):
        language, kind, rule_triggers, pattern = compiled[rule]
        if language not in languages:
            continue
        subject = text
        if rule not in as_written:
            if same_places:
                subject = lowered
            else:
                pattern = _caseless(rule)
        spans = (
            _windows(text, occurrences, rule_triggers & present) if windowed else [(0, len(text))]
        )
        for window_start, window_end in spans:
            for match in pattern.finditer(subject, window_start, window_end):
                start, end = match.span()
                while start < end and text[start] in _LEAD:
                    start += 1
                if end > start and (start, end) not in seen:
                    seen.add((start, end))
                    yield Flag(kind, field, start, end, language)
