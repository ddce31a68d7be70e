"""Kit's writing guides: what makes drafted outreach read as machine-written, per language.

Each guide is a markdown file in ``outreach/writing_guides/`` with a small header
(``version``, ``language``), written natively in its language. Bumping ``version`` is how a
guide change is announced to agents that cache it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from outreach import scopes
from outreach.errors import ValidationFailed
from outreach.models import Locale
from outreach.operations import Operation

GUIDE_DIR = Path(__file__).resolve().parent / "writing_guides"
LOCALES = tuple(Locale.values)


@dataclass(frozen=True)
class WritingGuide:
    locale: str
    language: str
    version: str
    title: str
    body: str

    def as_data(self) -> dict:
        return {
            "locale": self.locale,
            "language": self.language,
            "version": self.version,
            "title": self.title,
            "guide": self.body,
        }


@lru_cache(maxsize=len(LOCALES))
def _load(locale: str) -> WritingGuide:
    text = (GUIDE_DIR / f"{locale}.md").read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    fields = dict(line.split(": ", 1) for line in header.strip().splitlines())
    title = next(line[2:] for line in body.splitlines() if line.startswith("# "))
    return WritingGuide(
        locale=locale,
        language=fields["language"],
        version=fields["version"],
        title=title,
        body=body.strip(),
    )


def writing_guide(locale: object) -> WritingGuide:
    """The guide for ``locale``, or a clear error listing the five there are."""
    if not isinstance(locale, str) or locale.strip().lower() not in LOCALES:
        shown = locale if isinstance(locale, str) else type(locale).__name__
        raise ValidationFailed(
            f"There is no writing guide for locale {str(shown)[:20]!r}. Use one of: "
            f"{', '.join(LOCALES)} (the campaign's locale).",
            details={"fields": {"locale": [f"must be one of {', '.join(LOCALES)}"]}},
        )
    return _load(locale.strip().lower())


WRITING_GUIDE = Operation(
    name="outreach_get_writing_guide",
    title="Get Kit's writing guide for a language",
    description=(
        "Read this before drafting any outreach, in the campaign's locale "
        f"({', '.join(LOCALES)}). It lists the patterns that make a message read as "
        "machine-written, each with a bad and a better example, plus length and subject-line "
        "rules. Apply it to every draft; the version field changes when the guide does."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "locale": {
                "type": "string",
                "enum": list(LOCALES),
                "description": "The campaign's language.",
            }
        },
        "required": ["locale"],
        "additionalProperties": False,
    },
    data_schema={
        "type": "object",
        "properties": {
            "locale": {"type": "string"},
            "language": {"type": "string"},
            "version": {"type": "string"},
            "title": {"type": "string"},
            "guide": {"type": "string"},
        },
        "required": ["locale", "language", "version", "title", "guide"],
        "additionalProperties": False,
    },
    scope=scopes.READ,
    run=lambda actor, arguments: writing_guide(arguments["locale"]).as_data(),
    read_only=True,
    idempotent=True,
)
