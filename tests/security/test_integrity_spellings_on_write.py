"""Each spelling that used to pass the check, through the real write path (issue 37): a
hidden character is refused wherever it is written, an order however spelled is flagged in
a note and held from the shared layer, in each product language."""

from __future__ import annotations

import pytest

from prospect_memory.business.models import Entry
from prospect_memory.notes.models import Note
from tests.core.test_integrity_spellings import ORDERS, SPELLINGS
from tests.helpers import bearer
from tests.security.test_memory_integrity import save, store

pytestmark = pytest.mark.django_db

HIDDEN = {
    "zero-padded decimal": "Acme&#0000008203;Corp",
    "zero-padded hex": "Acme &#x000202E;moc.live@selas",
    "no semicolon": "Acme &#x202E moc.live@selas",
    "a named joiner between letters": "in&zwj;structions",
    "a selector after an ideograph": "葛\U000e0100 and 葉\U000e0101",
    "a selector after a math sign": "≤\ufe00 5",
}


@pytest.mark.parametrize("spelling", HIDDEN)
@pytest.mark.parametrize("where", ["body", "title"])
def test_a_hidden_character_in_a_note_is_refused(client, module_admin, spelling, where):
    text = HIDDEN[spelling]
    extra = {"title": text} if where == "title" else {}
    body = text if where == "body" else "Acme raised a round."
    reply = save(client, bearer(module_admin), body, **extra)
    assert reply.status_code == 400, reply.content
    problems = reply.json()["error"]["details"]["fields"][where]
    assert "invisible or control character" in problems[0]
    assert "position" in problems[0]
    assert not Note.objects.exists()


@pytest.mark.parametrize("spelling", HIDDEN)
def test_a_hidden_character_in_an_entry_or_its_source_is_refused(client, module_admin, spelling):
    text = HIDDEN[spelling]
    agent = bearer(module_admin)
    in_value = store(client, agent, key="voice", value={"tone": text})
    assert in_value.status_code == 400
    assert "value.tone" in in_value.json()["error"]["details"]["fields"]
    in_source = store(client, agent, key="voice", value={"tone": "warm"}, source={"step_id": text})
    assert in_source.status_code == 400
    assert "source.step_id" in in_source.json()["error"]["details"]["fields"]
    assert not Entry.objects.exists()


SPELLED = [
    "first letters as hex references",
    "no-break spaces as named references",
    "a combining accent on every vowel",
    "small capitals",
]


@pytest.mark.parametrize("language", ORDERS)
@pytest.mark.parametrize("spelling", SPELLED)
def test_a_spelled_order_in_a_note_is_stored_flagged(client, module_admin, language, spelling):
    body = "Acme Corp hires 12 AEs in Berlin.\n\n" + SPELLINGS[spelling](ORDERS[language])
    reply = save(client, bearer(module_admin), body)
    assert reply.status_code == 201, reply.content
    assert reply.json()["data"]["note"]["integrity"]["flagged"] is True
    assert Note.objects.get().flagged_at is not None


@pytest.mark.parametrize("language", ORDERS)
@pytest.mark.parametrize("spelling", SPELLED)
def test_a_spelled_order_never_reaches_the_shared_layer(client, module_admin, language, spelling):
    value = {"tone": "warm", "note": SPELLINGS[spelling](ORDERS[language])}
    held = store(client, bearer(module_admin), key="brand_voice", value=value, confidence=95)
    assert held.status_code == 409, held.content
    assert held.json()["error"]["code"] == "integrity_hold"
    assert not Entry.objects.exists()
