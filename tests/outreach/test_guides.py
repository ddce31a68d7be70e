"""Kit's writing guides: five real guides, each with at least 15 patterns and examples."""

import re

import pytest

from outreach.errors import ValidationFailed
from outreach.guides import LOCALES, writing_guide

LABELS = {
    "en": ("Bad:", "Better:"),
    "de": ("Schlecht:", "Besser:"),
    "fr": ("Mauvais :", "Mieux :"),
    "es": ("Mal:", "Mejor:"),
    "pl": ("Źle:", "Lepiej:"),
}
SECTIONS = {
    "en": ("Length", "Subject lines"),
    "de": ("Länge", "Betreffzeilen"),
    "fr": ("Longueur", "Objet"),
    "es": ("Extensión", "Asunto"),
    "pl": ("Długość", "Temat"),
}


def test_there_is_a_guide_for_every_campaign_locale():
    assert set(LOCALES) == {"en", "de", "fr", "es", "pl"}


@pytest.mark.parametrize("locale", ["en", "de", "fr", "es", "pl"])
def test_guide_has_patterns_with_bad_and_better_examples(locale):
    guide = writing_guide(locale)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}\.\d+", guide.version)
    patterns = re.split(r"\n### ", guide.body)[1:]
    assert len(patterns) >= 15
    bad, better = LABELS[locale]
    for pattern in patterns:
        assert bad in pattern, pattern[:60]
        assert better in pattern, pattern[:60]
    headings = re.findall(r"^## (.+)$", guide.body, flags=re.M)
    for section in SECTIONS[locale]:
        assert any(h.startswith(section) for h in headings), (locale, section, headings)


def test_guides_are_written_in_their_own_language():
    # A few words each language's guide must use, and English must not leak in.
    assert "Sie" in writing_guide("de").body
    assert "vous" in writing_guide("fr").body
    assert "¿" in writing_guide("es").body
    assert "Pan" in writing_guide("pl").body
    for locale in ("de", "fr", "es", "pl"):
        assert "Better:" not in writing_guide(locale).body


@pytest.mark.parametrize("locale", ["it", "", "EN ", None, 3, "english"])
def test_unknown_locale_lists_the_five(locale):
    if locale == "EN ":
        assert writing_guide(locale).locale == "en"
        return
    with pytest.raises(ValidationFailed) as info:
        writing_guide(locale)
    assert "en, de, fr, es, pl" in info.value.message
