"""Properties of note validation: any input is either stored as the rules say or refused
with a typed error, never an unexpected exception and never a silent cut."""

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from outreach.errors import KitError
from outreach.validation import FieldError
from prospect_memory.core.integrity import invisible_characters
from prospect_memory.notes.models import Note
from prospect_memory.notes.rules import clean_note_input, clean_title, normalise_url
from tests.factories import save_note

anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=10,
)


@given(title=anything, body=anything, source_urls=anything, observed_at=anything)
def test_validation_never_fails_unexpectedly(title, body, source_urls, observed_at):
    try:
        cleaned = clean_note_input(
            title=title, body=body, source_urls=source_urls, observed_at=observed_at
        )
    except KitError as error:
        assert error.code in {"validation_error", "body_too_large"}
        assert error.message
    else:
        assert cleaned.body == body  # never cut
        assert 1 <= len(cleaned.source_urls) <= 20


@given(title=st.text(max_size=500))
def test_title_is_one_line_of_at_most_120(title):
    if invisible_characters(title):
        with pytest.raises(FieldError, match="invisible or control character"):
            clean_title(title)
        return
    cleaned = clean_title(title)
    assert "\n" not in cleaned
    assert len(cleaned) <= 120
    assert cleaned == cleaned.strip()
    assert "  " not in cleaned


@given(
    host=st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=10),
    path=st.text(alphabet=string.ascii_letters + "/-_", max_size=20),
    port=st.sampled_from(["", ":443", ":8443"]),
    fragment=st.sampled_from(["", "#top", "#x"]),
)
def test_url_normalisation_ignores_case_default_port_and_fragment(host, path, port, fragment):
    plain = normalise_url(f"https://{host}.dev/{path}")
    varied = normalise_url(f"HTTPS://{host.upper()}.DEV{port}/{path}{fragment}")
    assert (plain == varied) == (port != ":8443")


@pytest.mark.django_db
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.text(min_size=1, max_size=12_000))
def test_a_save_stores_the_body_exactly_or_refuses(admin_actor, body):
    before = Note.objects.count()
    try:
        result = save_note(admin_actor, domain="prop.dev", body=body)
    except KitError as error:
        assert error.code in {"validation_error", "body_too_large", "domain_note_limit_reached"}
        assert Note.objects.count() == before
    else:
        assert Note.objects.get(id=result.note.id).body == body
