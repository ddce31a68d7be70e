"""What the check finds in a note or an entry about to be stored (SPEC 15.2): the flags of
each of its texts, placed in the field and the span of the text as stored."""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import replace
from urllib.parse import unquote, urlsplit

from outreach.characters import decoded
from prospect_memory.core.integrity.flags import MAX_FLAGS, Flag, quote
from prospect_memory.core.integrity.instructions import instructions
from prospect_memory.core.integrity.links import data_links, url_flags
from prospect_memory.core.integrity.markup import hidden_markup
from prospect_memory.core.integrity.normalise import Places, judged


def _placed(flags: Iterable[Flag], places: Places, length: int) -> list[Flag]:
    """Flags found in a form of a text, placed in the text itself (``length`` long): a
    flag ends where the next character of the form comes from, so a reference or a run
    that spelled its last character is inside it."""
    if places is None:
        return list(flags)
    placed = []
    for flag in flags:
        start = places[flag.start]
        end = places[flag.end] if flag.end < len(places) else length
        if end <= start:  # the next character came from the same place (one spelled many)
            end = places[flag.end - 1] + 1
        placed.append(replace(flag, start=start, end=end))
    return placed


def _scan_one(text: str) -> list[Flag]:
    """Every flag of one text (field left empty), in order, overlaps of a kind merged.

    Orders are read in the judged form (:mod:`.normalise`), links as a page reads them
    (character references decoded once, as in an address), markup as it is stored."""
    read, places = judged(text)
    shown = decoded(text, addresses=True)
    found = sorted(
        [
            *_placed(instructions(read, ""), places, len(text)),
            *hidden_markup(text, ""),
            *_placed(data_links(shown.text, ""), shown.origins, len(text)),
        ],
        key=lambda f: (f.start, -f.end),
    )
    kept: list[Flag] = []
    for flag in found:
        if any(k.kind == flag.kind and flag.start < k.end for k in kept[-4:]):
            continue  # the same finding, seen by two patterns
        kept.append(flag)
    return kept


#: What separates an item's texts when they are scanned together (a paragraph break: no
#: pattern reads a sentence across it, but words split over several strings still meet).
_BETWEEN = "\n\n"


def scan(parts: Iterable[tuple[str, str]], limit: int | None = MAX_FLAGS) -> list[Flag]:
    """The flags of an item's texts, given as ``(field, text)``, at most ``limit`` (every
    one when None), each placed in its field with the text it matched.

    The texts are scanned as one (an entry of 3,000 short strings costs one scan, not
    3,000), so an order split over several strings of a list is read as it is meant.
    """
    fields, starts, texts = [], [], []
    offset = 0
    for field, text in parts:
        if text:
            fields.append(field)
            starts.append(offset)
            texts.append(text)
            offset += len(text) + len(_BETWEEN)
    if not texts:
        return []
    joined = _BETWEEN.join(texts)
    flags = []
    for flag in _scan_one(joined):
        index = bisect_right(starts, flag.start) - 1
        last = bisect_right(starts, flag.end - 1) - 1
        start = starts[index]
        end = min(flag.end, start + len(texts[index]))
        if flag.start >= end:
            continue  # on a separator
        flags.append(
            replace(
                flag,
                field=fields[index],
                start=flag.start - start,
                end=end - start,
                text=quote(joined[flag.start : flag.end]),
                fields=tuple(dict.fromkeys(fields[index : last + 1])),
            )
        )
        if limit is not None and len(flags) >= limit:
            break
    return flags


def scan_text(text: str, field: str) -> list[Flag]:
    """The flags of one field's text."""
    return scan([(field, text)])


def value_texts(value, path: str = "value") -> Iterator[tuple[str, str]]:
    """Every string of a JSON value (object keys too) with where it is: ``value.a[2].b``."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"
            yield f"{where} (key)", key
            yield from value_texts(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from value_texts(item, f"{path}[{index}]")


def _words_of(identifier: str) -> str:
    """A key, an id or an address path as the words it spells, each part a clause of its
    own (``playbook:send-the-icp`` -> ``playbook. send the icp``): a namespace or a path
    segment reads as a heading, so an order after it starts its sentence."""
    parts = _HEADINGS.split(unquote(identifier))
    clauses = (" ".join(_NOT_WORDS.split(part)).strip() for part in parts)
    return ". ".join(clause for clause in clauses if clause)


_HEADINGS = re.compile(r"[:/]+")
_NOT_WORDS = re.compile(r"[\W_]+")


def _address_words(url: str) -> str:
    """The words a source address spells in each of its parts but its scheme: host (and a
    user before it), path, query and fragment (``x.dev/p#ignore-all-previous``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _words_of(url)
    pieces = [parts.netloc.replace(".", " "), parts.path, parts.query, parts.fragment]
    return ". ".join(words for words in map(_words_of, filter(None, pieces)) if words)


#: A business memory source's caller-given ids (``source.pipeline_id`` ...).
SOURCE_IDS = ("pipeline_id", "execution_id", "step_id")


def note_flags(*, title: str, body: str, source_urls: list[str]) -> list[Flag]:
    """What the check finds in a note about to be stored: its text, and its sources (the
    data they carry, and an order spelled in their path)."""
    parts = [("title", title), ("body", body)]
    parts += [
        (f"source_urls[{index}]", _address_words(url)) for index, url in enumerate(source_urls)
    ]
    flags = []
    for flag in scan(parts):
        if flag.field.startswith("source_urls["):
            url = source_urls[int(flag.field.removeprefix("source_urls[").rstrip("]"))]
            flag = replace(flag, start=0, end=len(url), text=quote(url))
        flags.append(flag)
    for index, url in enumerate(source_urls):
        flags += url_flags(url, f"source_urls[{index}]")
    return flags[:MAX_FLAGS]


def entry_flags(
    *, key: str, value, source: dict[str, str], limit: int | None = MAX_FLAGS
) -> list[Flag]:
    """What the check finds in an entry about to be stored: every string of its value, its
    key read as words, and its source's ids (at most ``limit`` findings, every one when
    None: a write compares every finding with the entry's, or ten quoted examples would
    hide an eleventh order). One flag marks the key or an id, with every field any of its
    findings runs through."""
    parts = [("key", _words_of(key)), *value_texts(value)]
    # A source's ids are read as they are, and as the words they spell (an id is written
    # ``ignore_all_previous-instructions`` as easily as a key); a flag marks the whole id
    # (or key).
    ids = {"key": key, **{f"source.{name}": source.get(name) or "" for name in SOURCE_IDS}}
    for field, text in list(ids.items())[1:]:
        parts.append((field, text))
        if _words_of(text) != text:
            parts.append((field, _words_of(text)))
    flags: list[Flag] = []
    whole: dict[tuple[str, str], int] = {}
    for flag in scan(parts, limit=None):
        if flag.field in ids:
            text = ids[flag.field]
            flag = replace(flag, start=0, end=len(text), text=quote(text))
            at = whole.get((flag.kind, flag.field))
            if at is not None:  # the one flag of the key or id runs where both findings run
                kept = flags[at]
                flags[at] = replace(kept, fields=tuple(dict.fromkeys(kept.fields + flag.fields)))
                continue
            whole[(flag.kind, flag.field)] = len(flags)
        flags.append(flag)
    return flags if limit is None else flags[:limit]
