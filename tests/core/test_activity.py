"""The activity page: what people and agents changed, newest first, with who and through
which client; module admins see the account's (never another member's own context), any
other member their own context's; filters, pages, and the same queries however many rows."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from prospect_memory.business.models import EntryEvent
from prospect_memory.business.services.store import entry_store
from prospect_memory.notes.models import AuditEvent
from tests import factories
from tests.factories import save_note
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def page(viewer, **params) -> str:
    browser = Client()
    browser.force_login(viewer.user)
    response = browser.get("/activity/", params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def happened(client, module_admin, member, admin_actor, member_actor, rival_actor):
    saved = client.post(
        "/api/v1/notes",
        {
            "domain": "acme.dev",
            "body": "Acme raised a Series B of 40M.",
            "source_urls": ["https://acme.dev/b"],
            "observed_at": timezone.now().date().isoformat(),
        },
        content_type="application/json",
        **bearer(module_admin, client_name="Claude Code"),
    )
    assert saved.status_code == 201
    entry_store(actor=admin_actor, key="icp_definition", value={"headcount": [50, 500]})
    entry_store(actor=admin_actor, key="icp_definition", value={"headcount": [50, 1000]})
    entry_store(actor=member_actor, key="my_signature", value="Best, Ann", layer="member")
    entry_store(actor=rival_actor, key="rival_secret_key", value="x")
    save_note(rival_actor, domain="rival-secret.com")


def test_a_module_admin_sees_the_accounts_changes_with_who_and_how(happened, module_admin):
    html = page(module_admin)
    assert "saved a note about" in html
    assert "acme.dev" in html
    assert "via Claude Code" in html
    assert "created" in html
    assert "icp_definition" in html
    assert "/business-memory/account/icp_definition/versions/1/changes/" in html
    assert "my_signature" not in html  # another member's own context
    assert "rival_secret_key" not in html
    assert "rival-secret.com" not in html


def test_another_member_sees_their_own_context_only(happened, member, other_admin):
    html = page(member)
    assert "my_signature" in html
    assert "icp_definition" not in html
    assert "acme.dev" not in html
    assert 'id="activity-member"' not in html  # no filter by other people
    # Kit's own event on a member's entry names no member, and is still theirs alone.
    EntryEvent.objects.create(
        account=member.account,
        action="evict",
        layer="member",
        key="my_signature",
        entry_id=EntryEvent.objects.get(key="my_signature").entry_id,
        version=1,
        actor="kit",
    )
    assert "evicted" in page(member)
    assert "evicted" not in page(factories.member(member.account, "third@example.com"))


def test_filters_by_member_client_kind_and_day(happened, module_admin, member):
    event = AuditEvent.objects.get(action="save", account=module_admin.account)
    only_notes = page(module_admin, kind="notes")
    assert "acme.dev" in only_notes
    assert "icp_definition" not in only_notes
    by_client = page(module_admin, client=event.oauth_application_id)
    assert "acme.dev" in by_client
    assert "icp_definition" not in by_client
    by_member = page(module_admin, member=module_admin.pk)
    assert "icp_definition" in by_member
    yesterday = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert "matches these filters" in page(module_admin, day=yesterday)
    assert "acme.dev" in page(module_admin, day="not-a-day")  # ignored, not a 500
    assert "matches these filters" in page(module_admin, day="9999-12-31")  # the last day
    assert "matches these filters" in page(module_admin, day="0001-01-01")


def test_an_entry_deleted_since_links_nowhere_even_when_its_key_is_used_again(
    module_admin, admin_actor
):
    from outreach import scopes
    from outreach.operations import execute
    from prospect_memory.business.operations import DELETE

    entry_store(actor=admin_actor, key="pricing", value={"plan": "old"})
    entry_store(actor=admin_actor, key="pricing", value={"plan": "older"}, expected_version=1)
    arguments = {"key": "pricing", "layer": "account", "expected_version": 2}
    execute(DELETE, actor=admin_actor, granted=scopes.ALL, arguments=arguments)
    html = page(module_admin)
    assert "/business-memory/account/pricing/" not in html
    assert "(no longer there)" in html
    entry_store(actor=admin_actor, key="pricing", value={"plan": "new"})
    entry_store(actor=admin_actor, key="pricing", value={"plan": "newer"}, expected_version=1)
    html = page(module_admin)
    # One "What changed" link: the new entry's version 2, not the deleted entry's.
    assert html.count("/business-memory/account/pricing/versions/1/changes/") == 1
    assert html.count('href="/business-memory/account/pricing/"') == 2  # the new entry's two


def test_no_link_to_changes_whose_versions_are_no_longer_kept(module_admin, admin_actor, settings):
    settings.BUSINESS_MEMORY = {"HISTORY_VERSIONS": 3}
    entry_store(actor=admin_actor, key="pricing", value={"plan": 1})
    for version in range(1, 8):
        entry_store(
            actor=admin_actor, key="pricing", value={"plan": version + 1}, expected_version=version
        )
    html = page(module_admin)
    linked = sorted(
        int(n)
        for n in re.findall(r"/business-memory/account/pricing/versions/(\d+)/changes/", html)
    )
    assert linked == [5, 6, 7]  # versions 5, 6 and 7 are kept, 8 is the current one
    browser = Client()
    browser.force_login(module_admin.user)
    for version in linked:
        changes = f"/business-memory/account/pricing/versions/{version}/changes/"
        assert browser.get(changes).status_code == 200


def test_pages_of_fifty_with_the_same_queries_however_many(module_admin, admin_actor):
    browser = Client()
    browser.force_login(module_admin.user)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert browser.get("/activity/").status_code == 200
        return len(captured)

    entry_store(actor=admin_actor, key="k0", value=0)
    few = queries()
    for i in range(1, 60):
        entry_store(actor=admin_actor, key=f"k{i}", value=i)
    assert queries() == few
    first = browser.get("/activity/").content.decode()
    assert "Page 1 of 2" in first
    assert "<code>k59</code>" in first
    assert "<code>k0</code>" not in first
    second = browser.get("/activity/", {"page": 2}).content.decode()
    assert "<code>k0</code>" in second
