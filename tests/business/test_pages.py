"""The business memory pages: read, edit (JSON checked, errors beside the field), delete
and restore with confirmation and CSRF, each member's own context, and who may do what."""

import re

import pytest
from django.test import Client

from outreach.access import Actor
from prospect_memory.business.models import Entry, EntryVersion
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db


def browser(member) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(member.user)
    return client


def csrf(client, path) -> str:
    client.get(path)
    return client.cookies["csrftoken"].value


def post(client, path, data):
    return client.post(path, {**data, "csrfmiddlewaretoken": csrf(client, path)})


@pytest.fixture
def baseline(admin_actor, member_actor):
    entry_store(
        actor=admin_actor,
        key="icp_definition",
        value={"industry": ["SaaS"], "note": "<script>alert(1)</script>"},
        confidence=90,
        source={"pipeline_id": "icp_builder", "step_id": "step_3"},
    )
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "warm"}, category="preference")
    entry_store(actor=member_actor, key="signature", value="Best, Sam", layer="member")


def test_the_memory_page_groups_the_account_layer_and_shows_the_own_context(
    baseline, module_admin, member
):
    page = browser(member).get("/business-memory/").content.decode()
    assert "icp_definition" in page
    assert "brand_voice" in page
    assert page.index("Fact") < page.index("icp_definition")
    assert page.index("Preference") < page.index("brand_voice")
    assert 'data-key="signature"' in page  # the member's own
    assert "<script>alert(1)</script>" not in page
    # The admin does not see the member's own context.
    admin_page = browser(module_admin).get("/business-memory/").content.decode()
    assert 'data-key="signature"' not in admin_page
    assert "Best, Sam" not in admin_page


def test_the_entry_page_shows_value_provenance_and_what_changed(baseline, module_admin):
    client = browser(module_admin)
    entry_store(
        actor=Actor.for_member(module_admin),
        key="icp_definition",
        value={"industry": ["SaaS", "DevTools"]},
    )
    page = client.get("/business-memory/account/icp_definition/").content.decode()
    assert "icp_builder" not in page.split("Where it came from")[0]
    assert "Version 1" in page
    assert '<span class="add">+     &quot;DevTools&quot;' in page
    assert "&lt;script&gt;" in page


def test_editing_saves_a_new_version_from_the_web(baseline, module_admin):
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/edit/"
    form = client.get(path).content.decode()
    assert 'name="expected_version" value="1"' in form
    response = post(
        client,
        path,
        {
            "value": '{"tone": "plain"}',
            "category": "preference",
            "confidence": "75",
            "expected_version": "1",
        },
    )
    assert response.status_code == 302
    entry = Entry.objects.get(key="brand_voice")
    assert (entry.value, entry.version, entry.confidence) == ({"tone": "plain"}, 2, 75)
    assert entry.oauth_application is None  # from the web
    assert entry.written_by == module_admin


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('{"tone": ', "This is not valid JSON"),
        ("null", "any JSON but null"),
        ('"' + "x" * 17_000 + '"', "the limit is 16,384"),
    ],
)
def test_a_bad_value_is_shown_beside_the_field_and_changes_nothing(
    baseline, module_admin, value, message
):
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/edit/"
    response = post(
        client,
        path,
        {"value": value, "category": "preference", "confidence": "75", "expected_version": "1"},
    )
    assert response.status_code == 200
    page = response.content.decode()
    field = page.split('id="id_value"')[1].split('id="id_category"')[0]
    assert message in field
    assert Entry.objects.get(key="brand_voice").version == 1


def test_an_edit_over_someone_elses_change_is_refused(baseline, module_admin, admin_actor):
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/edit/"
    client.get(path)
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "agent's"})
    response = post(
        client,
        path,
        {
            "value": '{"tone": "mine"}',
            "category": "preference",
            "confidence": "75",
            "expected_version": "1",
        },
    )
    assert response.status_code == 200
    assert "Someone changed this entry" in response.content.decode()
    assert Entry.objects.get(key="brand_voice").value == {"tone": "agent's"}


def test_restoring_a_version_needs_a_confirmed_post(baseline, module_admin, admin_actor):
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "cold"})
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/versions/1/restore/"
    confirm = client.get(path).content.decode()
    assert "Make version 1" in confirm
    assert Entry.objects.get(key="brand_voice").value == {"tone": "cold"}
    assert client.post(path).status_code == 403  # no CSRF token
    post(client, path, {})
    entry = Entry.objects.get(key="brand_voice")
    assert (entry.value, entry.version) == ({"tone": "warm"}, 3)


def test_deleting_needs_a_confirmed_post(baseline, module_admin):
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/delete/"
    assert "Delete <code>brand_voice</code>?" in client.get(path).content.decode()
    assert client.post(path).status_code == 403
    post(client, path, {})
    assert not Entry.objects.filter(key="brand_voice").exists()


def test_members_manage_their_own_context_but_not_the_accounts(baseline, member):
    client = browser(member)
    assert client.get("/business-memory/account/brand_voice/edit/").status_code == 403
    denied = post(
        client,
        "/business-memory/account/brand_voice/delete/",
        {},
    )
    assert denied.status_code == 403
    assert Entry.objects.filter(key="brand_voice").exists()
    created = post(
        client,
        "/business-memory/new/member/",
        {
            "key": "Territory",
            "value": '{"regions": ["DACH"]}',
            "category": "fact",
            "confidence": "80",
        },
    )
    assert created.status_code == 302
    assert Entry.objects.get(key="territory").member == member


def test_another_members_context_and_another_accounts_entries_are_not_found(
    baseline, module_admin, other_admin
):
    assert browser(module_admin).get("/business-memory/member/signature/").status_code == 404
    other = browser(other_admin)
    for path in (
        "/business-memory/account/icp_definition/",
        "/business-memory/account/icp_definition/edit/",
        "/business-memory/account/icp_definition/delete/",
        "/business-memory/account/icp_definition/versions/1/restore/",
    ):
        assert other.get(path).status_code == 404, path
    theirs = other.get("/business-memory/").content.decode()
    assert 'data-key="icp_definition"' not in theirs  # no row of ours
    assert 'data-start="icp_definition"' in theirs  # they are offered to start their own


def test_an_eviction_is_restored_from_the_page(baseline, module_admin, admin_actor, capacity):
    capacity(ACCOUNT_CAPACITY=2)
    entry_store(actor=admin_actor, key="weekly_signal", value="hot", confidence=95)
    evicted = Entry.objects.get(status="evicted")
    client = browser(module_admin)
    page = client.get("/business-memory/").content.decode()
    assert f"/business-memory/evictions/{evicted.id}/restore/" in page
    capacity(ACCOUNT_CAPACITY=10)
    post(client, f"/business-memory/evictions/{evicted.id}/restore/", {})
    assert Entry.objects.get(id=evicted.id).status == "live"
    assert EntryVersion.objects.count() == 0


def test_the_pages_run_no_inline_script(baseline, module_admin):
    page = browser(module_admin).get("/business-memory/account/icp_definition/").content.decode()
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/kit/kit.js" defer>']


def test_page_writes_share_the_agents_write_budget(baseline, module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 1
    client = browser(module_admin)
    path = "/business-memory/account/brand_voice/edit/"
    form = {"value": '{"tone": "one"}', "category": "preference", "confidence": "70"}
    assert post(client, path, {**form, "expected_version": "1"}).status_code == 302
    refused = post(client, path, {**form, "value": '{"tone": "two"}', "expected_version": "2"})
    assert refused.status_code == 200
    assert "writes through this client in the last minute" in refused.content.decode()
    assert Entry.objects.get(key="brand_voice").value == {"tone": "one"}


@pytest.mark.parametrize("action", ["delete/", "versions/1/restore/"])
def test_a_confirmation_of_an_older_version_changes_nothing(
    baseline, module_admin, admin_actor, action
):
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "v2"})
    client = browser(module_admin)
    path = f"/business-memory/account/brand_voice/{action}"
    client.get(path)
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "v3 by an agent"})
    response = post(client, path, {"expected_version": "2"})
    assert response.status_code == 302
    entry = Entry.objects.get(key="brand_voice")
    assert (entry.value, entry.version) == ({"tone": "v3 by an agent"}, 3)
    assert "changed since you looked" in client.get(response.url).content.decode()


def test_an_upper_case_key_in_the_address_finds_the_entry(baseline, module_admin):
    page = browser(module_admin).get("/business-memory/account/ICP_Definition/")
    assert page.status_code == 200
    assert "icp_builder" in page.content.decode()


def test_writes_by_the_wrong_person_change_nothing(
    baseline, module_admin, member, other_admin, admin_actor, capacity
):
    capacity(ACCOUNT_CAPACITY=2)
    entry_store(actor=admin_actor, key="weekly_signal", value="hot", confidence=95)
    evicted = Entry.objects.get(status="evicted")
    before = sorted(Entry.objects.values_list("key", "version", "status"))
    form = {"value": '{"x": 1}', "category": "fact", "confidence": "50", "expected_version": "1"}
    outsider, colleague, admin = browser(other_admin), browser(member), browser(module_admin)
    attempts = [
        (outsider, "/business-memory/account/icp_definition/edit/", form, 404),
        (outsider, "/business-memory/account/icp_definition/delete/", {}, 404),
        (outsider, "/business-memory/account/icp_definition/versions/1/restore/", {}, 404),
        (outsider, f"/business-memory/evictions/{evicted.id}/restore/", {}, 404),
        (colleague, "/business-memory/account/icp_definition/edit/", form, 403),
        (colleague, f"/business-memory/evictions/{evicted.id}/restore/", {}, 403),
        (colleague, "/business-memory/new/account/", {**form, "key": "sneaky"}, 403),
        (admin, "/business-memory/member/signature/edit/", form, 404),
        (admin, "/business-memory/member/signature/delete/", {}, 404),
    ]
    for client, path, data, status in attempts:
        token = client.get("/business-memory/") and client.cookies["csrftoken"].value
        response = client.post(path, {**data, "csrfmiddlewaretoken": token})
        assert response.status_code == status, path
    assert sorted(Entry.objects.values_list("key", "version", "status")) == before


def test_an_entry_named_new_has_its_own_page(baseline, module_admin, admin_actor):
    entry_store(actor=admin_actor, key="new", value={"x": "VALUE-OF-NEW"})
    page = browser(module_admin).get("/business-memory/account/new/").content.decode()
    assert "VALUE-OF-NEW" in page


def test_a_nul_byte_in_an_address_is_refused(baseline, module_admin):
    client = browser(module_admin)
    for path in ("/business-memory/account/%00/", "/business-memory/member/a%00b/edit/"):
        assert client.get(path).status_code == 400, path


def test_creating_a_key_that_exists_says_so_beside_the_key(baseline, module_admin):
    form = {"key": "brand_voice", "value": "{}", "category": "fact", "confidence": "50"}
    page = post(browser(module_admin), "/business-memory/new/account/", form)
    assert page.status_code == 200
    assert "exists already" in page.content.decode()


def test_members_are_not_offered_restores_they_may_not_make(
    baseline, member, admin_actor, capacity
):
    capacity(ACCOUNT_CAPACITY=2)
    entry_store(actor=admin_actor, key="weekly_signal", value="hot", confidence=95)
    evicted = Entry.objects.get(status="evicted")
    page = browser(member).get("/business-memory/").content.decode()
    assert evicted.key in page
    assert f"/business-memory/evictions/{evicted.id}/restore/" not in page
