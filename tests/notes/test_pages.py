"""Kit's web pages through Django's test client: every page and action, and tenancy."""

import re
from datetime import timedelta

import pytest
from django.test import Client

from outreach.services import suppression_add
from prospect_memory.notes.models import AuditEvent, Note
from prospect_memory.notes.rules import utc_today
from tests import factories
from tests.factories import save_note

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme(account, admin_actor):
    campaign = factories.campaign(account, "Spring", locale="de")
    prospect = factories.prospect(campaign, "founder@acme.dev")
    factories.sent(prospect, 2)
    factories.reply(prospect, "positive")
    notes = [
        save_note(
            admin_actor,
            title=f"Finding {i}",
            body=f"Fact **{i}** about Acme.",
            source_urls=[f"https://acme.dev/{i}"],
            observed_at=(utc_today() - timedelta(days=10 * i)).isoformat(),
        ).note
        for i in range(5)
    ]
    return prospect, notes


def browser_for(member):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(member.user)
    return browser


def csrf(browser, path):
    browser.get(path)
    return browser.cookies["csrftoken"].value


def test_pages_need_sign_in(client, acme):
    prospect, _notes = acme
    for path in ["/", f"/prospects/{prospect.pk}/", "/companies/acme.dev/", "/health/"]:
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_sign_in_page(client, module_admin):
    module_admin.user.set_password("pw-for-test-123")
    module_admin.user.save()
    assert client.get("/accounts/login/").status_code == 200
    response = client.post(
        "/accounts/login/", {"username": "admin@example.com", "password": "pw-for-test-123"}
    )
    assert response.status_code == 302


def test_home_lists_the_accounts_prospects(module_admin, acme, other_account):
    factories.prospect(factories.campaign(other_account), "secret@rival.example")
    page = browser_for(module_admin).get("/").content.decode()
    assert "founder@acme.dev" in page
    assert "secret@rival.example" not in page


def test_prospect_page_shows_the_three_newest_notes(module_admin, acme):
    prospect, _notes = acme
    response = browser_for(module_admin).get(f"/prospects/{prospect.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('class="note') == 3
    for title in ("Finding 0", "Finding 1", "Finding 2"):
        assert title in page
    assert "Finding 3" not in page
    assert "(5 notes)" in page
    assert 'href="/companies/acme.dev/notes/" class="view-all">View all' in page
    assert "<strong>0</strong>" in page  # markdown rendered
    assert 'rel="noopener noreferrer"' in page
    assert "Stale · 40 days old" not in page  # only the three newest are shown
    assert "Spring · de" in page
    assert "Positive" in page
    assert "by admin@example.com" in page


def test_stale_badge_and_stop_banner(module_admin, account, admin_actor):
    prospect = factories.prospect(factories.campaign(account), "ceo@initech.com")
    factories.reply(prospect, "negative")
    save_note(
        admin_actor,
        domain="initech.com",
        observed_at=(utc_today() - timedelta(days=45)).isoformat(),
    )
    page = browser_for(module_admin).get(f"/prospects/{prospect.pk}/").content.decode()
    assert "Stale · 45 days old" in page
    assert "Do not contact." in page
    assert "was negative" in page


def test_suppressed_company_shows_the_stop_banner(module_admin, account, acme):
    suppression_add(account=account, kind="domain", value="acme.dev")
    page = browser_for(module_admin).get("/companies/acme.dev/").content.decode()
    assert "Do not contact." in page
    assert "domain: acme.dev" in page


def test_note_list_paginates_and_filters(module_admin, acme, admin_actor):
    for i in range(20):
        save_note(admin_actor, body=f"extra {i}", source_urls=[f"https://acme.dev/x{i}"])
    browser = browser_for(module_admin)
    first = browser.get("/companies/acme.dev/notes/").content.decode()
    assert first.count('class="note') == 20
    assert "Page 1 of 2" in first
    assert (
        browser.get("/companies/acme.dev/notes/?page=2").content.decode().count('class="note') == 5
    )
    stale = browser.get("/companies/acme.dev/notes/?show=stale").content.decode()
    assert stale.count('class="note') == 1  # only the one observed 40 days ago (over 30)
    fresh = browser.get("/companies/acme.dev/notes/?show=fresh").content.decode()
    assert fresh.count('class="note') == 20


def test_delete_asks_for_confirmation_then_deletes_with_an_audit_event(module_admin, acme):
    _prospect, notes = acme
    browser = browser_for(module_admin)
    listing = browser.get("/companies/acme.dev/notes/").content.decode()
    assert f"/notes/{notes[1].id}/delete/" in listing
    confirm = browser.get(f"/notes/{notes[1].id}/delete/")
    assert confirm.status_code == 200
    assert "Delete this note?" in confirm.content.decode()
    assert Note.objects.filter(id=notes[1].id).exists()  # GET changes nothing
    token = browser.cookies["csrftoken"].value
    done = browser.post(f"/notes/{notes[1].id}/delete/", {"csrfmiddlewaretoken": token})
    assert done.status_code == 302
    assert done["Location"] == "/companies/acme.dev/notes/"
    assert not Note.objects.filter(id=notes[1].id).exists()
    event = AuditEvent.objects.get(action="delete")
    assert (str(event.note_id), event.actor) == (notes[1].id, "admin@example.com")
    after = browser.get("/companies/acme.dev/notes/").content.decode()
    assert "Deleted “Finding 1”." in after
    assert "<h3>Finding 1</h3>" not in after


def test_delete_needs_csrf(module_admin, acme):
    _prospect, notes = acme
    response = browser_for(module_admin).post(f"/notes/{notes[0].id}/delete/")
    assert response.status_code == 403
    assert Note.objects.filter(id=notes[0].id).exists()


def test_members_who_are_not_module_admins_read_but_cannot_delete(member, acme):
    prospect, notes = acme
    browser = browser_for(member)
    assert browser.get(f"/prospects/{prospect.pk}/").status_code == 200
    listing = browser.get("/companies/acme.dev/notes/").content.decode()
    assert "/delete/" not in listing
    assert browser.get(f"/notes/{notes[0].id}/delete/").status_code == 403
    token = browser.cookies["csrftoken"].value
    refused = browser.post(f"/notes/{notes[0].id}/delete/", {"csrfmiddlewaretoken": token})
    assert refused.status_code == 403
    assert Note.objects.filter(id=notes[0].id).exists()
    assert browser.get("/health/").status_code == 403


def test_another_accounts_objects_answer_404(other_admin, acme):
    prospect, notes = acme
    browser = browser_for(other_admin)
    assert browser.get(f"/prospects/{prospect.pk}/").status_code == 404
    assert browser.get("/companies/acme.dev/").status_code == 404
    assert browser.get("/companies/acme.dev/notes/").status_code == 404
    assert browser.get(f"/notes/{notes[0].id}/delete/").status_code == 404
    token = csrf(browser, "/")
    assert (
        browser.post(f"/notes/{notes[0].id}/delete/", {"csrfmiddlewaretoken": token}).status_code
        == 404
    )
    assert Note.objects.filter(id=notes[0].id).exists()


def test_unknown_ids_and_domains_answer_404(module_admin, acme):
    browser = browser_for(module_admin)
    assert browser.get("/prospects/999999/").status_code == 404
    assert browser.get("/companies/nobody.dev/").status_code == 404
    assert browser.get("/companies/localhost/").status_code == 404
    assert browser.get("/notes/00000000-0000-0000-0000-000000000000/delete/").status_code == 404


def test_company_lookup_resolves_any_form(module_admin, acme):
    browser = browser_for(module_admin)
    response = browser.get("/companies/?domain=https://www.acme.dev/careers")
    assert response["Location"] == "/companies/acme.dev/"
    bad = browser.get("/companies/?domain=co.uk", follow=True)
    assert "public suffix" in bad.content.decode()


def test_account_switcher(module_admin, other_account):
    factories.member(other_account, "admin@example.com", admin=False)
    browser = browser_for(module_admin)
    page = browser.get("/").content.decode()
    assert 'name="account"' in page
    assert "Rival Co" in page
    token = browser.cookies["csrftoken"].value
    switched = browser.post(
        "/account/switch", {"account": "rival-co", "csrfmiddlewaretoken": token}
    )
    assert switched.status_code == 302
    assert "Rival Co" in browser.get("/").content.decode()
    assert browser.get("/health/").status_code == 403  # not module admin there
    refused = browser.post("/account/switch", {"account": "nope", "csrfmiddlewaretoken": token})
    assert refused.status_code == 404


def test_there_is_no_form_that_writes_a_note(module_admin, acme):
    prospect, _notes = acme
    browser = browser_for(module_admin)
    for path in [
        "/",
        f"/prospects/{prospect.pk}/",
        "/companies/acme.dev/",
        "/companies/acme.dev/notes/",
        "/health/",
    ]:
        page = browser.get(path).content.decode()
        assert 'name="body"' not in page
        assert "<textarea" not in page


def test_memory_health(module_admin, account, admin_actor, client):
    from prospect_memory.notes.selectors import dossier_recall
    from prospect_memory.notes.services.notes import recall_record

    save_note(admin_actor, body="One finding.")
    save_note(admin_actor, body="One finding!", source_urls=["https://acme.dev/news/series-b"])
    recall_record(actor=admin_actor, recall=dossier_recall(actor=admin_actor, domain="acme.dev"))
    recall_record(actor=admin_actor, recall=dossier_recall(actor=admin_actor, domain="unknown.dev"))
    page = browser_for(module_admin).get("/health/").content.decode()
    assert "<svg" in page
    assert "50%" in page  # 1 of 2 recalls reused from memory
    assert "1 of 2" in page  # one near-duplicate save, one shared source
    assert "Kit web / API session" in page
    # The chart is server-rendered SVG: the page's only script is Kit's own static file.
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/kit/kit.js" defer>']


def test_pages_load_nothing_from_outside(module_admin, acme):
    prospect, _notes = acme
    page = browser_for(module_admin).get(f"/prospects/{prospect.pk}/").content.decode()
    head = page.split("</head>")[0]
    assert "http://" not in head
    assert "https://" not in head


@pytest.mark.django_db(transaction=True)
def test_recall_usage_is_recorded_outside_a_transaction(module_admin):
    from outreach.access import Actor
    from prospect_memory.notes.models import UsageEvent
    from prospect_memory.notes.selectors import dossier_recall
    from prospect_memory.notes.services.notes import recall_record

    actor = Actor.for_member(module_admin)
    recall_record(actor=actor, recall=dossier_recall(actor=actor, domain="acme.dev"))
    event = UsageEvent.objects.get()
    assert (event.kind, event.subject, event.from_memory) == ("recall", "acme.dev", False)
