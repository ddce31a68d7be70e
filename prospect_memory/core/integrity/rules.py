"""The integrity rules, read from their data files (``rules/*.toml``, one per language and
one they share; how a rule is written: the head of ``rules/common.toml``).

Each rule is a kind (:data:`.flags.KINDS`), the words one of which must occur in the text
before its pattern is tried at all (most research never mentions them, so most rules cost
one substring search), and the pattern. Words and patterns are folded into the judged
form (:func:`.normalise.skeleton`) as they are read, so a rule written ``wyślij`` meets a
text that spells it ``wyslij``.

The rules look for an AI spoken to, an order to forget, hide or keep quiet, and an order
that sends, calls or rewrites; never for the words "AI", "assistant", "agent" or
"instructions" alone: research talks about AI products, support agents and onboarding
instructions every day, and ``datasets/integrity_set.jsonl`` measures both sides.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path
from typing import NamedTuple

from prospect_memory.core.integrity.normalise import skeleton

LANGUAGES = ("en", "de", "fr", "es", "pl")
_FOLDER = Path(__file__).with_name("rules")
_FRAGMENT = re.compile(r"\{:(\w+)\}")


class Rule(NamedTuple):
    language: str  #: "" for a rule of every language
    kind: str
    triggers: tuple[str, ...]
    pattern: str


@cache
def _file(name: str) -> dict:
    with open(_FOLDER / f"{name}.toml", "rb") as data:
        return tomllib.load(data)


def _joined(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


def _expanded(pattern: str, fragments: dict[str, str], name: str = "pattern") -> str:
    """``pattern`` with every ``{:fragment}`` in it written out (fragments of fragments too)."""
    for _ in range(10):
        written = _FRAGMENT.sub(lambda found: _fragment(found.group(1), fragments, name), pattern)
        if written == pattern:
            return written
        pattern = written
    raise ValueError(f"integrity rules: the fragments of {name} refer to each other in a circle")


def _fragment(name: str, fragments: dict[str, str], where: str) -> str:
    if name not in fragments:
        raise ValueError(f"integrity rules: {where} uses the fragment {name!r}, defined nowhere")
    return fragments[name]


def _triggers(named: list[str], lists: dict[str, list[str]], where: str) -> tuple[str, ...]:
    found: list[str] = []
    for word in named:
        if word.startswith("@") and len(word) > 1:  # "@" alone is the sign an address has
            if word[1:] not in lists:
                raise ValueError(f"integrity rules: {where} names the trigger list {word}")
            found += lists[word[1:]]
        else:
            found.append(word)
    return tuple(skeleton(word) for word in found)


def _rules_of(name: str, language: str, fragments: dict, lists: dict) -> list[Rule]:
    rules = []
    for number, rule in enumerate(_file(name)["rule"], start=1):
        where = f"rule {number} of rules/{name}.toml"
        pattern = skeleton(_expanded(_joined(rule["pattern"]), fragments, where))
        triggers = _triggers(rule["triggers"], lists, where)
        rules.append(Rule(language, rule["kind"], triggers, pattern))
    return rules


@cache
def every_rule() -> tuple[Rule, ...]:
    """Every rule, those of every language first, then each language's in its file's order."""
    common = _file("common")
    shared = {name: _joined(value) for name, value in common["fragments"].items()}
    shared_lists = common.get("triggers", {})
    found = _rules_of("common", "", shared, shared_lists)
    for language in LANGUAGES:
        data = _file(language)
        own = {name: _joined(value) for name, value in data.get("fragments", {}).items()}
        lists = {**shared_lists, **data.get("triggers", {})}
        found += _rules_of(language, language, {**shared, **own}, lists)
    return tuple(found)


@cache
def function_words() -> dict[str, frozenset[str]]:
    """Per language other than English: its function words (two of them in a text run the
    language's rules)."""
    return {
        language: frozenset(skeleton(word) for word in _file(language)["words"]["function"])
        for language in LANGUAGES
        if language != "en"
    }


@cache
def order_words() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Per language other than English: (whole words, word stems) an order to an AI can
    hardly do without (one of them in a text runs the language's rules)."""
    found = {}
    for language in LANGUAGES:
        if language == "en":
            continue
        words = _file(language)["words"]
        whole = frozenset(skeleton(word) for word in words["order"])
        found[language] = (whole, tuple(skeleton(stem) for stem in words["order_stems"]))
    return found
