"""Text that should read as what it looks like: Unicode look-alikes mapped to Latin.

Used where a name or a sentence must not pass for another by its letters: OAuth client
names against Kit's reserved names, and stored research scanned for orders to an AI
(``prospect_memory.core.integrity``), where "Ignore" spelled with a Cyrillic I is "Ignore".
"""

from __future__ import annotations

from functools import cache

from confusable_homoglyphs.confusables import confusables_data


def _ascii_lookalike(char: str) -> str | None:
    for _ in range(3):  # some look-alikes map to another look-alike first
        if char.isascii():
            return char
        glyphs = [g["c"] for g in confusables_data.get(char, ())]
        ascii_glyph = next((g for g in glyphs if g.isascii() and g.isalnum()), None)
        if ascii_glyph is not None or not glyphs:
            return ascii_glyph
        char = glyphs[0]
    return None


@cache
def latin_lookalike(char: str) -> str:
    """The ASCII letter or digit ``char`` is confusable with (Unicode TR39 data), or
    ``char`` itself."""
    found = _ascii_lookalike(char)
    if found is None and char.upper() != char:
        found = _ascii_lookalike(char.upper())
        found = found.lower() if found else None
    return found or char
