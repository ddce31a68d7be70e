"""Every note rule of SPEC section 4, through note_save on real PostgreSQL."""

from datetime import timedelta

import pytest

from prospect_memory.notes.errors import BodyTooLarge, InvalidDomain, ValidationFailed
from prospect_memory.notes.models import AuditEvent, DailySaveCount, Dossier, Note
from prospect_memory.notes.rules import clean_title, embedding_input, utc_today
from tests.factories import save_note

pytestmark = pytest.mark.django_db


def _nothing_stored():
    return not Note.objects.exists() and not Dossier.objects.exists()


# --- body ---------------------------------------------------------------------------------


def test_body_at_the_limit_is_accepted(admin_actor):
    result = save_note(admin_actor, body="x" * 10_240)
    assert result.note.body == "x" * 10_240


@pytest.mark.parametrize("body", ["x" * 10_241, "é" * 5_121, "🙂" * 2_561])
def test_body_over_10_kb_is_rejected_never_cut(admin_actor, body):
    with pytest.raises(BodyTooLarge) as info:
        save_note(admin_actor, body=body)
    assert info.value.code == "body_too_large"
    assert info.value.http_status == 413
    assert info.value.details["limit_bytes"] == 10_240
    assert info.value.details["size_bytes"] == len(body.encode())
    assert "split" in info.value.message
    assert _nothing_stored()


@pytest.mark.parametrize("body", ["", "   \n\t", None, 42, ["text"]])
def test_body_is_required_text(admin_actor, body):
    with pytest.raises(ValidationFailed) as info:
        save_note(admin_actor, body=body)
    assert "body" in info.value.details["fields"]


# --- title --------------------------------------------------------------------------------


def test_title_is_collapsed_to_one_line_and_cut():
    assert clean_title("  Funding\n\n round \t B  ") == "Funding round B"
    assert clean_title("a" * 200) == "a" * 120
    assert clean_title("word " * 30) == ("word " * 24).strip()
    assert clean_title(None) == ""


def test_title_is_stored_collapsed(admin_actor):
    result = save_note(admin_actor, title="Series B\r\nfunding  " + "z" * 200)
    assert result.note.title == ("Series B funding " + "z" * 200)[:120]
    assert "\n" not in Note.objects.get().title


def test_title_must_be_text(admin_actor):
    with pytest.raises(ValidationFailed, match="title must be a string"):
        save_note(admin_actor, title=["x"])


# --- source URLs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("urls", "field", "fragment"),
    [
        ([], "source_urls", "give 1 to 20"),
        (None, "source_urls", "required"),
        ("https://acme.dev", "source_urls", "must be a list"),
        ([f"https://acme.dev/{i}" for i in range(21)], "source_urls", "give 1 to 20"),
        (["javascript:alert(1)"], "source_urls[0]", "http:// or https://"),
        (["ftp://acme.dev/file"], "source_urls[0]", "http:// or https://"),
        (["/relative/path"], "source_urls[0]", "http:// or https://"),
        (["https://"], "source_urls[0]", "http:// or https://"),
        (["https://acme.dev", 7], "source_urls[1]", "must be a string"),
        (["https://acme.dev/a b"], "source_urls[0]", "contains spaces"),
        (["https://acme.dev/a\x07b"], "source_urls[0]", "U+0007 control character at position 18"),
        (["https://acme.dev/" + "a" * 2040], "source_urls[0]", "under that"),
        (["https://acme.dev/a", "HTTPS://ACME.dev:443/a#top"], "source_urls[1]", "repeats"),
        (["https://acme.dev:99999/"], "source_urls[0]", "not a valid URL"),
        # A lone surrogate, which JSON can spell ("\\ud800") and UTF-8 cannot: refused by
        # name, not measured (which raised UnicodeEncodeError before).
        (["https://acme.dev/\ud800"], "source_urls[0]", "source_urls[0]"),
    ],
)
def test_bad_source_urls_are_named(admin_actor, urls, field, fragment):
    with pytest.raises(ValidationFailed) as info:
        save_note(admin_actor, source_urls=urls)
    messages = info.value.details["fields"][field]
    assert any(fragment in m for m in messages), messages
    assert _nothing_stored()


def test_twenty_urls_under_2_kb_are_accepted(admin_actor):
    urls = [f"https://acme.dev/{i}" for i in range(19)] + ["https://acme.dev/" + "a" * 2030]
    assert len(urls[-1].encode()) < 2048
    assert save_note(admin_actor, source_urls=urls).note.source_urls == urls


# --- observed_at --------------------------------------------------------------------------


def test_observed_at_is_required_never_defaulted(admin_actor):
    with pytest.raises(ValidationFailed, match="observed_at is required"):
        save_note(admin_actor, observed_at=None)


def test_observed_at_tomorrow_is_accepted_later_is_rejected(admin_actor):
    today = utc_today()
    save_note(admin_actor, observed_at=(today + timedelta(days=1)).isoformat())
    with pytest.raises(ValidationFailed, match="in the future"):
        save_note(admin_actor, observed_at=(today + timedelta(days=2)).isoformat())


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01", "31/12/2025", 20261130, True])
def test_observed_at_must_be_a_date(admin_actor, value):
    with pytest.raises(ValidationFailed) as info:
        save_note(admin_actor, observed_at=value)
    assert "observed_at" in info.value.details["fields"]


def test_observed_at_accepts_a_full_timestamp(admin_actor):
    result = save_note(admin_actor, observed_at="2026-11-02T09:30:00+00:00")
    assert result.note.observed_at.isoformat() == "2026-11-02"


# --- everything at once, and the domain -------------------------------------------------


def test_all_field_problems_come_back_together(admin_actor):
    with pytest.raises(ValidationFailed) as info:
        save_note(admin_actor, title=5, source_urls=["ftp://x.dev"], observed_at="soon")
    assert set(info.value.details["fields"]) == {"title", "source_urls[0]", "observed_at"}
    assert "2 more problem" in info.value.message


def test_invalid_domain_is_refused(admin_actor):
    with pytest.raises(InvalidDomain):
        save_note(admin_actor, domain="co.uk")
    assert _nothing_stored()


def test_domain_forms_share_one_dossier(admin_actor):
    for form in ["founder@acme.dev", "https://www.acme.dev/careers", "ACME.dev.", "jobs.acme.dev"]:
        save_note(admin_actor, domain=form, body=f"finding from {form}")
    assert list(Dossier.objects.values_list("domain", "active_note_count")) == [("acme.dev", 4)]


# --- what a save stores --------------------------------------------------------------------


def test_save_stores_attribution_embedding_and_audit(admin_actor, module_admin):
    result = save_note(admin_actor)
    note = Note.objects.get()
    assert note.member == module_admin
    assert note.oauth_application is None
    assert note.embedding_status == "ready"
    assert note.embedding_model == "kit-local-hash-v1"
    assert len(note.embedding) == 384
    assert result.note.member == "admin@example.com"
    event = AuditEvent.objects.get()
    assert (event.action, event.note_id, event.domain, event.actor) == (
        "save",
        note.id,
        "acme.dev",
        "admin@example.com",
    )
    assert DailySaveCount.objects.get().saves == 1


def test_embedding_input_is_title_and_body_cut_to_6_kb_on_a_character():
    text = embedding_input("T", "é" * 4000)
    assert len(text.encode()) <= 6144
    assert text.startswith("T\n\n")
    assert text.encode().decode() == text  # no broken character
    assert len(embedding_input("", "a" * 9000)) == 6144
