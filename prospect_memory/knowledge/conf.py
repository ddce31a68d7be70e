"""Knowledge search's settings: one ``KNOWLEDGE`` dict merged over ``DEFAULTS``; every
text that names one of these numbers is built from here."""

from __future__ import annotations

from typing import Any

from prospect_memory.core.conf import AppSettings

DEFAULTS: dict[str, Any] = {
    "LIMIT_DEFAULT": 10,
    "LIMIT_MAX": 20,
    "QUERY_MAX_CHARS": 1000,
    #: Characters of a note's body or an entry's value shown with a hit.
    "EXCERPT_CHARS": 300,
    #: The answer's size at most (compact JSON); past it the farthest hits are left out.
    "PAYLOAD_MAX_BYTES": 100 * 1024,
}

knowledge_settings = AppSettings("KNOWLEDGE", DEFAULTS)
