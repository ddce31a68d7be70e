"""Characters that do not show (SPEC 15.1): refused at write, never shown to a reader, in
a memory's text and in every name a client gives itself.

Refused, by Unicode's own properties (read through the ``regex`` module's tables, newer
than this Python's): control characters (but tab and line breaks), format characters
(Cf), unassigned, private-use and surrogate code points, every Default_Ignorable_Code_Point
and Bidi_Control, every variation selector, and the braille blank (a printable character
that renders as an empty cell). Spelled as an HTML character reference, any padding, any
base, with or without its semicolon (``&#0000008203;``, ``&#x000202E``, ``&zwj;``), they
are refused the same: a page decodes them into the characters themselves.

Allowed, because emoji are made of them: the joiners, selectors and tags inside an emoji
sequence Unicode recommends (the ``emoji`` package's list, partly qualified forms too:
"👩‍💻", "🏳‍🌈", the flags of England, Scotland and Wales, keycaps), and a presentation
selector (VS15, VS16) right after a character Unicode calls an emoji. Any other variation
selector is refused: the product's languages need none, and one after each of 32
ideographs spells a sentence in the 256 selectors' bytes.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache

import emoji
import regex
import unicodedata2

_ALLOWED_CONTROLS = "\t\n\r"
#: Everything that may be refused, by property; each one found is then looked at in its
#: place (an emoji may need it).
_INVISIBLE = (
    r"[[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}"
    r"\p{Variation_Selector}\u2800]--[\t\n\r]]"
)
ZWJ = "\u200d"
_TAGS = "\U000e0020-\U000e007f"


@cache
def _presentation() -> regex.Pattern:
    """A presentation selector (VS15, VS16) right after a character Unicode calls an emoji:
    the sequences fonts draw as text or as emoji (ASCII digits only in a keycap)."""
    return regex.compile(r"(?<=[\p{Emoji}--\p{ASCII}])[\ufe0e\ufe0f]", regex.V1)


#: What an emoji may need among the refused characters (only texts with one are parsed).
_EMOJI_PARTS = re.compile(f"[\u200d\ufe0e\ufe0f{_TAGS}]")


@cache
def _refused_codes() -> tuple[int, ...]:
    by_property = regex.compile(_INVISIBLE, regex.V1)
    return tuple(code for code in range(0x110000) if by_property.match(chr(code)))


@cache
def _printable_codes() -> tuple[int, ...]:
    return tuple(code for code in _refused_codes() if chr(code).isprintable())


@cache
def _classes() -> tuple[re.Pattern, re.Pattern]:
    """The refused characters as a class of the standard ``re`` module (searched many times
    faster than the same class by property), and those of them that Python calls printable
    (found by the fast check of :func:`plainly_visible`). Built once per process, from the
    properties, over every code point (0.4 s)."""
    return re.compile(_class_of(list(_refused_codes()))), re.compile(
        _class_of(list(_printable_codes()))
    )


def _class_of(codes: list[int]) -> str:
    ranges, first = [], codes[0]
    for previous, code in zip(codes, [*codes[1:], None], strict=True):
        if code != previous + 1:
            ranges.append(
                re.escape(chr(first)) + (f"-{re.escape(chr(previous))}" * (previous > first))
            )
            first = code
    return "[" + "".join(ranges) + "]"


def is_refused(char: str) -> bool:
    """Whether ``char`` is refused wherever it stands alone (an emoji may still need it)."""
    return _classes()[0].fullmatch(char) is not None


def warm() -> None:
    """Build the classes now (a worker does it once at start)."""
    _classes()
    _presentation()


def plainly_visible(text: str) -> bool:
    """The fast answer for most text (0.1-1 us for a note): every character printable (tab
    and line breaks aside), none of the printable invisible ones, no character reference to
    decode."""
    return "&" not in text and _shows_as_is(text)


def _shows_as_is(text: str) -> bool:
    """No character of ``text`` itself is one that may be refused (references aside)."""
    if text.isascii():  # only a control character can be refused
        return not _ASCII_CONTROL.search(text)
    if not text.isprintable():
        lines = text.replace("\n", "").replace("\r", "").replace("\t", "")
        if not lines.isprintable():
            return False
    # The printable refused characters all lie high (from U+034F): most text in the
    # product's languages has none that high but its punctuation.
    return max(text) < _lowest_printable() or not _classes()[1].search(text)


@cache
def _lowest_printable() -> str:
    """The lowest printable character that is refused (U+034F with today's tables)."""
    return chr(_printable_codes()[0])


_ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


#: A character reference as HTML5 reads it in text: any number of digits, any base, the
#: semicolon optional, a name of up to 32 characters (``html.unescape``'s own reading).
_REFERENCE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)")
#: The same in an address, where ``&copy=1`` is a parameter, not a ``©`` (HTML5 leaves a
#: name without its semicolon as it is inside an attribute).
_REFERENCE_IN_ADDRESS = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[a-zA-Z][a-zA-Z0-9]{1,31};)")


@dataclass(frozen=True)
class Decoded:
    """A text with its character references decoded as a page would show them."""

    text: str
    #: Where each character of ``text`` starts in the original (None: the same places).
    origins: list[int] | None = None
    #: The reference that spelled a character, by its place in ``text``.
    spelled: dict[int, str] | None = None


def _reference(reference: str) -> str:
    """What a browser reads a character reference as (HTML5's rules): a number is its code
    point, a control character or a noncharacter too (Python's ``html.unescape`` drops
    those, a browser does not), but 0x80-0x9F as windows-1252 reads them, and zero, a
    surrogate or past the last code point U+FFFD; a name as ``html.unescape`` reads it."""
    if not reference.startswith("&#"):
        return html.unescape(reference)
    digits = reference[2:].rstrip(";")
    base, digits = (16, digits[1:]) if digits[:1] in "xX" else (10, digits)
    digits = digits.lstrip("0") or "0"
    if len(digits) > 8:  # past the last code point in any base (and int() of 5,000 digits fails)
        return "\ufffd"
    code = int(digits, base)
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return "\ufffd"
    if 0x80 <= code <= 0x9F:
        return bytes([code]).decode("cp1252", errors="ignore") or chr(code)
    return chr(code)


def decoded(text: str, *, addresses: bool = False) -> Decoded:
    """``text`` with its character references decoded once, as a browser decodes them in
    text (``addresses``: in a link's address)."""
    if "&" not in text:
        return Decoded(text)
    pieces: list[str] = []
    origins: list[int] = []
    spelled: dict[int, str] = {}
    done = length = 0
    for match in (_REFERENCE_IN_ADDRESS if addresses else _REFERENCE).finditer(text):
        reference = match.group(0)
        value = _reference(reference)
        if value == reference:
            continue
        start = match.start()
        pieces.append(text[done:start])
        origins.extend(range(done, start))
        length += start - done
        for offset, _ in enumerate(value):
            spelled[length + offset] = reference
        pieces.append(value)
        origins.extend([start] * len(value))
        length += len(value)
        done = match.end()
    if not spelled:
        return Decoded(text)
    pieces.append(text[done:])
    origins.extend(range(done, len(text)))
    return Decoded("".join(pieces), origins, spelled)


@dataclass(frozen=True)
class Invisible:
    """A refused character: its position (in characters, from 0) and what it is."""

    position: int
    char: str
    #: The character reference that spelled it (``&#x202E;``), when it came as one.
    entity: str = ""

    @property
    def name(self) -> str:
        code = ord(self.char)
        name = unicodedata2.name(self.char, "")
        kind = {"Cc": "control character", "Cn": "unassigned", "Co": "private use"}.get(
            unicodedata2.category(self.char), "invisible character"
        )
        entity = self.entity if len(self.entity) <= 16 else self.entity[:15] + "…"
        written = f" written as {entity}" if entity else ""
        return f"U+{code:04X} {name or kind}{written}"


def _in_emoji(text: str) -> set[int]:
    """The places of ``text`` that are parts of an emoji sequence: of one the ``emoji``
    package knows (Unicode's recommended sequences, fully and partly qualified: joiners,
    keycaps, the subdivision flags' tags), or a presentation selector after an emoji."""
    if not _EMOJI_PARTS.search(text):
        return set()
    places = {
        place
        for found in emoji.emoji_list(text)
        for place in range(found["match_start"], found["match_end"])
    }
    return places | {match.start() for match in _presentation().finditer(text)}


def _refused(text: Decoded) -> list[tuple[int, str]]:
    """The places (in ``text.text``) and characters of what is refused."""
    if _shows_as_is(text.text):
        return []  # references that spell visible characters only (most: &amp;, &nbsp;)
    allowed = _in_emoji(text.text)
    return [
        (match.start(), match.group(0))
        for match in _classes()[0].finditer(text.text)
        if match.start() not in allowed
    ]


def invisible_characters(text: str) -> list[Invisible]:
    """Every character of ``text`` that is refused, in order: directly, or spelled as a
    character reference (a page would render ``&#x202E;`` as the override itself)."""
    if plainly_visible(text):
        return []
    read = decoded(text)
    return [
        Invisible(
            read.origins[place] if read.origins else place,
            char,
            (read.spelled or {}).get(place, ""),
        )
        for place, char in _refused(read)
    ]


def invisible_problem(text: str, field: str, *, shown: int = 3) -> str | None:
    """The refusal of ``text`` in ``field`` in words an agent can act on, or None."""
    found = invisible_characters(text)
    if not found:
        return None
    where = ", ".join(f"{f.name} at position {f.position}" for f in found[:shown])
    more = f" and {len(found) - shown} more" if len(found) > shown else ""
    return (
        f"{field} contains {len(found)} invisible or control character"
        f"{'s' if len(found) != 1 else ''} ({where}{more}), which can hide text from the "
        "people who read it; remove them and save again (emoji are fine)"
    )


#: What a reader gets in place of a refused character (Unicode's sign for a character
#: that cannot be shown): visible, so nothing is hidden, and nothing is silently lost.
SHOWN_INSTEAD = "\ufffd"


def readable(text: str) -> str:
    """``text`` as every reader receives it: each character the write path would refuse
    (kept from before the check, or brought by a route that did not check) replaced by
    U+FFFD, directly or where a character reference spelled it. Text a write accepts
    comes back unchanged."""
    if plainly_visible(text):
        return text
    read = decoded(text)
    refused = _refused(read)
    if not refused:
        return text
    cut: dict[int, int] = {}  # original start -> original end of what is replaced
    for place, _ in refused:
        if read.origins is None:
            cut[place] = place + 1
        else:
            start = read.origins[place]
            reference = (read.spelled or {}).get(place)
            cut[start] = start + (len(reference) if reference else 1)
    pieces, done = [], 0
    for start in sorted(cut):
        if start < done:
            continue
        pieces += [text[done:start], SHOWN_INSTEAD]
        done = cut[start]
    pieces.append(text[done:])
    return "".join(pieces)


@lru_cache(maxsize=4096)
def readable_name(name: str) -> str:
    """:func:`readable` for a name many rows repeat (who wrote a note, through which
    client): each name looked at once per process, not once per row."""
    return readable(name)


def readable_value(value):
    """A JSON value as every reader receives it: :func:`readable` on each of its strings
    (object keys too)."""
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, dict):
        return {readable(key): readable_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [readable_value(item) for item in value]
    return value


def readable_json(text: str) -> str:
    """A value's stored compact JSON as every reader receives it (see :func:`readable_value`);
    the same text when nothing in it would be refused (a character escaped in JSON,
    ``\\u202e``, is looked at decoded)."""
    if plainly_visible(text) and "\\u" not in text:
        return text
    value = json.loads(text)
    shown = readable_value(value)
    if shown == value:
        return text
    return json.dumps(shown, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def cut(text: str, most: int, *, mark: str = "…") -> str:
    """``text`` cut to at most ``most`` characters, ``mark`` included when it is cut, between
    two user-perceived characters (grapheme clusters): an emoji sequence is kept whole or
    left out, never cut into joiners and tags a reader would be handed bare."""
    if len(text) <= most:
        return text
    room, end = most - len(mark), 0
    for cluster in _CLUSTER.finditer(text, 0, most + 64):  # a cluster is a few characters
        if cluster.end() > room:
            break
        end = cluster.end()
    return text[:end] + mark


_CLUSTER = regex.compile(r"\X")
