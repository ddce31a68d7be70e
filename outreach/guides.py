"""Kit's writing guides: what makes drafted outreach read as machine-written, per language.

Each guide is a markdown file in ``outreach/writing_guides/`` with a small header
(``version``, ``language``), written natively in its language. Bumping ``version`` is how a
guide change is announced to agents that cache it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from outreach.errors import ValidationFailed
from outreach.models import Locale

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
