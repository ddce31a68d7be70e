"""The one form every rule judges a text in (SPEC 15.2): what it says, however it is spelled.

The stored text stays what its writer sent; only the judgement reads this form, and every
span it finds is mapped back to the stored text. In order:

1. character references decoded, any padding, any base, with or without the semicolon,
   named ones too, up to three times (``&amp;#x49;`` is an ``I`` to a reader that decodes
   what it is shown);
2. markdown emphasis and code marks read as spaces (``**Ignore** all``);
3. each other character folded to its skeleton: compatibility forms undone (NFKD, so
   fullwidth, mathematical and circled letters and ligatures are letters again), combining
   marks dropped (``I`` + U+0301 and ``Ì`` are ``I``), a Latin letter with a stroke, a
   hook or a dot, a dotless ``ı``, a script ``ɡ`` or a small capital read as its letter
   (by its Unicode name), look-alikes of other scripts mapped to the Latin letter they
   pass for (Unicode TR39's confusables), every invisible character dropped (``in&zwj;
   structions``), every space a space;
4. runs of three or more spaces or line breaks cut to two (what every pattern reads in a
   run: a space, and whether a line ends there).

The rules are written in the same form: :func:`skeleton` folds their words and patterns,
so ``wyślij`` in a rule and ``wyslij``, ``wyślij`` or ``wyśli&#x6A;`` in a text meet.
"""

from __future__ import annotations

import re
from functools import cache

import unicodedata2

from outreach.characters import SHOWN_INSTEAD, decoded, is_refused
from outreach.text import latin_lookalike

#: Cyrillic and Greek letters that pass for Latin ones in a word (Unicode's confusables
#: map the I-shaped ones to "l", which would hide "Ignore").
_LETTER_LOOKALIKES = str.maketrans(
    "АВЕКМНОРСТХІЈЅаеорсухіјѕԁһӏԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοινρτυχ",
    "ABEKMHOPCTXIJSaeopcyxijsdhlqwABEZHIKMNOPTYXaoivptux",
)
#: A Latin letter named for its base letter: "LATIN SMALL LETTER L WITH STROKE" (ł),
#: "... DOTLESS I" (ı), "... SCRIPT G" (ɡ), "LATIN LETTER SMALL CAPITAL A" (ᴀ).
_LATIN_NAME = re.compile(
    r"^LATIN (?:(SMALL|CAPITAL) LETTER (?:DOTLESS |SCRIPT |SMALL CAPITAL )?|LETTER SMALL CAPITAL )"
    r"([A-Z])(?: WITH .+)?$"
)
#: Hyphens that join the parts of one word (``instruc‐tions``): read as nothing.
_IN_WORD = "\u2010\u2011"
#: What keyboards, word processors and web pages write for an apostrophe (``don’t``,
#: ``l’utilisateur``): read as the one the rules spell.
_APOSTROPHES = "\u2018\u2019\u201b\u02bc\u02b9\u2032\uff07\u00b4\u0060"
_LINE_ENDS = "\u2028\u2029\x85"


def _letter(char: str) -> str:
    """One character of a decomposition as the Latin letter it is or looks like (a sign
    stays itself: mapped to ASCII, a dash in a rule's character class would make a range)."""
    if char.isascii() or unicodedata2.category(char)[0] not in "LN":
        return char
    looked = char.translate(_LETTER_LOOKALIKES)
    if looked.isascii():
        return looked
    named = _LATIN_NAME.match(unicodedata2.name(char, ""))
    if named:
        return named.group(2) if named.group(1) == "CAPITAL" else named.group(2).lower()
    return latin_lookalike(char)


@cache
def fold(char: str) -> str:
    """The skeleton of one character (see the module's third step)."""
    if char.isascii():
        return char
    if char in _IN_WORD or char == SHOWN_INSTEAD or is_refused(char):
        return ""  # U+FFFD: what a reader sees for a hidden character, which cut a word
    if char in _LINE_ENDS:
        return "\n"
    if char in _APOSTROPHES:
        return "'"
    if unicodedata2.category(char) == "Zs":
        return " "
    return "".join(
        _letter(part)
        for part in unicodedata2.normalize("NFKD", char)
        if not unicodedata2.combining(part) and unicodedata2.category(part) not in ("Mn", "Me")
    )


class _Folds(dict):
    """A ``str.translate`` table that folds each character on first sight, then from C."""

    def __missing__(self, code: int) -> str:
        folded = self[code] = fold(chr(code))
        if len(folded) != 1:
            _UNEVEN.add(chr(code))
        return folded


_FOLDS = _Folds()
#: Characters whose skeleton is not one character long (a text with one needs its places).
_UNEVEN: set[str] = set()


def skeleton(text: str) -> str:
    """``text`` folded character by character (for the rules' own words and patterns)."""
    return text if text.isascii() else text.translate(_FOLDS)


Places = list[int] | None


def _then(first: Places, second: Places) -> Places:
    """Places through two steps: where each character of the second's text came from."""
    if second is None:
        return first
    if first is None:
        return second
    return [first[at] for at in second]


def _folded_with_places(text: str) -> tuple[str, list[int]]:
    pieces, places = [], []
    for index, char in enumerate(text):
        piece = fold(char)
        pieces.append(piece)
        places.extend([index] * len(piece))
    return "".join(pieces), places


def _substituted(text: str, pattern: re.Pattern, replace) -> tuple[str, Places]:
    """``text`` with each match of ``pattern`` replaced by ``replace(match)``, and where each
    character came from (None: nothing replaced)."""
    pieces: list[str] = []
    places: list[int] = []
    done = 0
    for match in pattern.finditer(text):
        found, new = match.group(0), replace(match)
        if new == found:
            continue
        start, end = match.span()
        pieces.append(text[done:start])
        places.extend(range(done, start))
        pieces.append(new)
        places.extend(range(start, end) if len(new) == len(found) else [start] * len(new))
        done = end
    if not pieces:
        return text, None
    pieces.append(text[done:])
    places.extend(range(done, len(text)))
    return "".join(pieces), places


#: Markup a page renders away, read as what it leaves: inline elements and a comment of one
#: short word as nothing (``Ig<b>nore</b>``, ``Ignore <!--x--> all``), a longer comment as
#: what it says, block elements as a line break; other tags (``<tool_call>``) stay for the
#: rules that read them.
_INLINE = (
    "a|abbr|b|bdi|bdo|big|cite|code|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span|"
    "strike|strong|sub|sup|time|tt|u|var|wbr"
)
_BLOCK = (
    "address|article|aside|blockquote|br|dd|details|div|dl|dt|figcaption|figure|footer|h[1-6]|"
    "header|hr|li|main|nav|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul"
)
_MARKUP = re.compile(
    rf"(<!--\s*\S{{0,20}}?\s*-->)|<!--|-->|<\s*/?\s*(?:({_INLINE})|{_BLOCK})\b[^<>]{{0,400}}>",
    re.I,
)
#: Emphasis, code and strike marks, and backslash escapes, which cut a word or a phrase a
#: reader sees whole (``Ig**nore**``, ``_Ignore_``, ``Ignore * all * previous``): read as
#: nothing. An underscore inside a word (``outreach_store``) is part of it, and a star a
#: command's flags end on stays (``rm -rf *``: everything).
_EMPHASIS = re.compile(
    r"`+|(?<!-rf )(?<!-fr )(?<!-r )(?<!-f )(?<!-rf\t)\*+|~~|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])"
    r"|\\(?=[!-/:-@\[-`{-~])"
)
#: Digits written for letters inside a word (``1gn0re``, ``prev10us``): read as the letters.
_LEET_WORD = re.compile(r"\b(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{3,}\b", re.I)
_LEET = str.maketrans("013457", "oieast")
#: Four words or more joined into one (``ignore-all-previous-instructions``,
#: ``ignore_all_previous_instructions``, ``IgnoreAllPreviousInstructions``), and a word
#: spelled one letter at a time (``i g n o r e``): read as the words.
_JOINED = re.compile(r"\b[a-z]+(?:([-_])[a-z]+){3,}\b", re.I)
_CAMEL = re.compile(r"\b[A-Z]?[a-z]+(?:[A-Z][a-z]+){3,}\b")
_SPACED_LETTERS = re.compile(r"(?<!\w)(?:[a-z] ){3,}[a-z](?!\w)", re.I)
#: A row of a markdown table (``| Ignore all | previous instructions |``): its cells read as
#: one line.
_TABLE_ROW = re.compile(r"^[ \t]*\|[^\n]*\|[ \t]*$", re.M)


def _markup(match: re.Match) -> str:
    """A comment of one short word or an inline tag as nothing, a longer comment's marks as
    a space (what it says is read), a block tag as a line break."""
    if match.group(1) or match.group(2):
        return ""
    return " " if match.group(0) in ("<!--", "-->") else "\n"


def _joined(match: re.Match) -> str:
    word = match.group(0)
    return word if word.lower().startswith("outreach_") else re.sub(r"[-_]", " ", word)


_STEPS = (
    ("<", _MARKUP, _markup),
    ("*`~_\\", _EMPHASIS, lambda match: ""),
)
_ASCII_STEPS = (
    ("0123457", _LEET_WORD, lambda match: match.group(0).translate(_LEET)),
    ("-_", _JOINED, _joined),
    (None, _CAMEL, lambda match: re.sub(r"(?<=[a-z])(?=[A-Z])", " ", match.group(0))),
    (None, _SPACED_LETTERS, lambda match: match.group(0).replace(" ", "")),
    ("|", _TABLE_ROW, lambda match: match.group(0).replace("|", " ")),
)


def _steps(read: str, places: Places, steps) -> tuple[str, Places]:
    for signs, pattern, replace in steps:
        if signs is None or any(sign in read for sign in signs):
            read, moved = _substituted(read, pattern, replace)
            places = _then(places, moved)
    return read, places


def judged(text: str) -> tuple[str, Places]:
    """``text`` in the form the rules judge, and where each of its characters came from in
    ``text`` (None: the same places)."""
    read, places = text, None
    for _ in range(3):  # decoded as often as it still decodes, three times at most
        if "&" not in read:
            break
        decoding = decoded(read)
        if decoding.origins is None:
            break
        read, places = decoding.text, _then(places, decoding.origins)
    read, places = _steps(read, places, _STEPS)
    if not read.isascii():
        folded = read.translate(_FOLDS)
        if len(folded) == len(read) and _UNEVEN.isdisjoint(read):
            read = folded
        else:
            read, folding = _folded_with_places(read)
            places = _then(places, folding)
    read, places = _steps(read, places, _ASCII_STEPS)
    read, spacing = _spaced(read)
    return read, _then(places, spacing)


_LONG_SPACE = re.compile(r"\s{3,}")


def _spaced(text: str) -> tuple[str, Places]:
    """``text`` with each run of three or more spaces or line breaks cut to two (the second
    a line break if the run had one), and where each character came from (None: nowhere
    cut). A pattern that starts a clause after a line break would otherwise be tried at
    every break of a long run and read the run to its end from each."""
    pieces: list[str] = []
    origins: list[int] = []
    done = 0
    for run in _LONG_SPACE.finditer(text):
        start, end = run.span()
        pieces.append(text[done:start])
        origins.extend(range(done, start))
        second = text.find("\n", start + 1, end)
        if second == -1 or text[start + 1] == "\n":
            second = start + 1
        pieces.append(text[start] + text[second])
        origins += [start, second]
        done = end
    if not pieces:  # no run to cut
        return text, None
    pieces.append(text[done:])
    origins.extend(range(done, len(text)))
    return "".join(pieces), origins
