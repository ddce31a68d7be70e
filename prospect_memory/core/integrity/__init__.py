"""Stored text is data, never instructions (SPEC 15): what Kit refuses and flags at write,
and what a reader receives.

Agents write notes and entries from what they read on the web, and every later agent reads
them back into its context. A page can carry text addressed to those agents, hidden text,
or a link built to carry data out. Two checks run on every text written to either memory:

- **Refused** (:mod:`.characters`): characters that do not show, by Unicode's properties,
  directly or spelled as character references, except what emoji need. The write is
  refused with the field and the position, and nothing is stored. Every answer and page
  shows :func:`readable` text, so such a character kept from before the check reaches no
  reader either.
- **Flagged** (:mod:`.scan`): text that addresses an AI with instructions (in the five
  product languages, rules in ``rules/*.toml``), markup that renders invisibly, and links
  whose address looks like it carries data. Every rule judges one form of the text
  (:mod:`.normalise`: references decoded, accents, look-alikes and invisible characters
  folded), so how an order is spelled does not hide it. The write succeeds; the item
  keeps its :class:`Flag` list (reason, field, span in the text as stored), every answer
  that returns it says so, and people clear or delete it.

A detector of phrases cannot catch every attack (docs/security.md, "Memory poisoning", says
what it misses); what it catches it explains, and its false flags on ordinary research
that talks about AI, assistants, agents and instructions are measured on the labelled set
in ``datasets/integrity_set.jsonl`` (``manage.py integrity_report``).

Everything here is pure: no database, no settings.
"""

from __future__ import annotations

from outreach import characters
from outreach.characters import (
    ZWJ,
    Invisible,
    invisible_characters,
    invisible_problem,
    readable,
    readable_json,
    readable_value,
)
from prospect_memory.core.integrity import instructions
from prospect_memory.core.integrity.flags import (
    DATA_LINK,
    FLAGGED_WARNING,
    HIDDEN_MARKUP,
    INSTRUCTION,
    INTEGRITY_SCHEMA,
    KINDS,
    MAX_FLAGS,
    QUOTE_CHARS,
    Flag,
    dumps,
    integrity_data,
    loads,
    with_integrity,
)
from prospect_memory.core.integrity.links import url_flags
from prospect_memory.core.integrity.scan import (
    SOURCE_IDS,
    entry_flags,
    note_flags,
    scan,
    scan_text,
    value_texts,
)


def warm() -> None:
    """Build the character classes and compile the rules now (a worker does it once at
    start, before it freezes its objects out of the garbage collector)."""
    characters.warm()
    instructions.warm()


__all__ = [
    "DATA_LINK",
    "FLAGGED_WARNING",
    "HIDDEN_MARKUP",
    "INSTRUCTION",
    "INTEGRITY_SCHEMA",
    "KINDS",
    "MAX_FLAGS",
    "QUOTE_CHARS",
    "SOURCE_IDS",
    "ZWJ",
    "Flag",
    "Invisible",
    "dumps",
    "entry_flags",
    "integrity_data",
    "invisible_characters",
    "invisible_problem",
    "loads",
    "note_flags",
    "readable",
    "readable_json",
    "readable_value",
    "scan",
    "scan_text",
    "url_flags",
    "value_texts",
    "warm",
    "with_integrity",
]
