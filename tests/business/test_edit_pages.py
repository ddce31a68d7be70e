"""Editing business memory on its pages: a version conflict is shown and loses nothing,
an empty baseline is offered its four starting forms, and a problem inside a value is
reported beside that part of it (the form editor places it; its browser test drives it)."""

import json
import re

import pytest

from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store
from tests.business.test_pages import browser, csrf

pytestmark = pytest.mark.django_db

EDIT = "/business-memory/account/brand_voice/edit/"


@pytest.fixture
def voice(admin_actor):
    entry_store(
        actor=admin_actor,
        key="brand_voice",
        value={"tone": "warm", "banned_phrases": ["synergy"]},
        category="preference",
        confidence=90,
    )


def post(client, path, value, *, expected, **extra):
    return client.post(
        path,
        {
            "csrfmiddlewaretoken": csrf(client, path),
            "value": json.dumps(value),
            "category": "preference",
            "confidence": 90,
            "expected_version": expected,
            **extra,
        },
    )


def test_a_conflict_shows_their_change_and_keeps_mine(voice, module_admin, admin_actor):
    client = browser(module_admin)
    entry_store(
        actor=admin_actor,
        key="brand_voice",
        value={"tone": "warm", "banned_phrases": ["synergy", "touch base"]},
        expected_version=1,
    )
    mine = {"tone": "short and direct", "banned_phrases": ["synergy"]}
    answer = post(client, EDIT, mine, expected=1)
    assert answer.status_code == 200
    html = answer.content.decode()
    assert 'id="conflict"' in html
    assert "touch base" in html  # what they changed
    assert "short and direct" in html  # what I wrote, kept in the form
    assert re.search(r'name="expected_version" value="2"', html)
    assert Entry.objects.get(key="brand_voice").version == 2  # nothing overwritten
    saved = post(client, EDIT, mine, expected=2)
    assert saved.status_code == 302
    entry = Entry.objects.get(key="brand_voice")
    assert (entry.version, entry.value["tone"]) == (3, "short and direct")


@pytest.mark.parametrize("forged", ["-1", "0", "2147483648", "99999999999999999999"])
def test_a_version_no_entry_can_have_is_refused_on_the_form(voice, module_admin, forged):
    answer = post(browser(module_admin), EDIT, {"tone": "x"}, expected=forged)
    assert answer.status_code == 200
    assert "This page sent a version no entry has" in answer.content.decode()
    assert Entry.objects.get(key="brand_voice").version == 1


def test_an_empty_baseline_is_offered_its_four_starting_forms(module_admin, member):
    page = browser(module_admin).get("/business-memory/").content.decode()
    for key in ("icp_definition", "deal_score_rubric", "brand_voice", "product_catalog"):
        assert f'data-start="{key}"' in page
    assert 'id="starters"' not in browser(member).get("/business-memory/").content.decode()
    new = browser(module_admin).get("/business-memory/new/account/?start=brand_voice")
    html = new.content.decode()
    assert 'value="brand_voice"' in html
    assert "banned_phrases" in html
    assert 'id="starter"' in html
    own = browser(member).get("/business-memory/new/member/?start=brand_voice").content.decode()
    assert 'id="starter"' not in own  # starters are the shared layer's
    assert "&quot;banned_phrases&quot;" not in own


def test_a_starter_once_written_is_no_longer_offered(voice, module_admin):
    page = browser(module_admin).get("/business-memory/").content.decode()
    assert 'data-start="brand_voice"' not in page
    assert 'data-start="icp_definition"' in page


def test_a_problem_inside_a_value_is_placed_beside_that_part(voice, module_admin):
    answer = post(
        browser(module_admin),
        EDIT,
        {"tone": "warm", "banned_phrases": ["syn\u200bergy"]},
        expected=1,
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    placed = re.search(r'data-errors="([^"]*)"', html)
    assert placed, html[:500]
    errors = json.loads(placed.group(1).replace("&quot;", '"'))
    assert list(errors) == ["value.banned_phrases[0]"]
    assert "invisible" in errors["value.banned_phrases[0]"][0]


def test_saving_the_form_unchanged_writes_nothing_and_keeps_the_order(module_admin, admin_actor):
    entry_store(actor=admin_actor, key="brand_voice", value={"zeta": 1, "alpha": 2})
    client = browser(module_admin)
    page = client.get(EDIT).content.decode()
    assert page.index("zeta") < page.index("alpha")  # the stored order, not sorted
    answer = client.post(
        EDIT,
        {
            "csrfmiddlewaretoken": csrf(client, EDIT),
            "value": '{"zeta": 1, "alpha": 2}',
            "category": "fact",
            "confidence": 50,
            "expected_version": 1,
        },
    )
    assert answer.status_code == 302
    assert Entry.objects.get(key="brand_voice").version == 1
    assert "Nothing changed" in client.get(answer.url).content.decode()


def test_a_name_twice_in_one_object_is_refused(voice, module_admin):
    client = browser(module_admin)
    answer = client.post(
        EDIT,
        {
            "csrfmiddlewaretoken": csrf(client, EDIT),
            "value": '{"tone": "a", "tone": "b"}',
            "category": "preference",
            "confidence": 90,
            "expected_version": 1,
        },
    )
    assert "appears twice in one object" in answer.content.decode()
    assert Entry.objects.get(key="brand_voice").version == 1


def test_an_entry_deleted_while_editing_keeps_the_changes_to_store_again(
    voice, module_admin, admin_actor, other_admin
):
    from outreach import scopes
    from outreach.operations import execute
    from prospect_memory.business.operations import DELETE

    client = browser(module_admin)
    token = csrf(client, EDIT)
    arguments = {"key": "brand_voice", "layer": "account", "expected_version": 1}
    execute(DELETE, actor=admin_actor, granted=scopes.ALL, arguments=arguments)
    mine = {"tone": "mine, kept", "banned_phrases": []}
    answer = client.post(
        EDIT,
        {
            "csrfmiddlewaretoken": token,
            "value": json.dumps(mine),
            "category": "preference",
            "confidence": 90,
            "expected_version": 1,
        },
    )
    assert answer.status_code == 200
    html = answer.content.decode()
    assert "Someone deleted this entry while you were editing it" in html
    assert "mine, kept" in html
    assert 'action="/business-memory/new/account/"' in html
    # Another account's admin posting to that address meets a 404, as before.
    outsider = browser(other_admin)
    assert (
        outsider.post(
            EDIT, {"csrfmiddlewaretoken": csrf(outsider, "/business-memory/")}
        ).status_code
        == 404
    )
