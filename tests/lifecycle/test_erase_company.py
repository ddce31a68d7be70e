"""Erasing a company (SPEC 16): every note of the domain (active, archived), its compactions,
vectors, the events that name it and admin's log of them go, in the erasing account only;
the erasure is audited without content; a save racing the erasure never brings back what
was there before; the page asks for the domain typed again."""

import threading

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client

from outreach.access import Actor
from prospect_memory.core.models import Erasure, UsageEvent
from prospect_memory.lifecycle.erase import erase_company, subject_digest
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests import factories
from tests.business.test_pages import browser, csrf
from tests.factories import save_note
from tests.forgetful.models import Remembered
from tests.lifecycle.scan import Subject, leftovers
from tests.rest import Api

pytestmark = pytest.mark.django_db

ERASE = "/api/v1/erasures/company"


def researched(actor, domain="acme.dev"):
    """Notes about ``domain``, two of them compacted (archived), a recall's usage event and
    an admin's log entry about one note."""
    saved = [
        save_note(
            actor,
            domain=domain,
            title=f"Finding {i}",
            body=f"{domain} finding {i}",
            source_urls=[f"https://{domain}/news/{i}"],
        )
        for i in range(3)
    ]
    dossier_compact(
        actor=actor,
        domain=domain,
        expected_note_count=3,
        body=f"{domain}: findings 0 and 1 merged",
        note_ids=[str(saved[0].note.id), str(saved[1].note.id)],
    )
    UsageEvent.objects.create(
        account=actor.account, memory="prospect", kind="recall", subject=domain
    )
    note = Note.objects.filter(account=actor.account, dossier__domain=domain).first()
    LogEntry.objects.create(
        user=factories.member(actor.account).user,
        content_type=ContentType.objects.get_for_model(Note),
        object_id=str(note.pk),
        object_repr=str(note),
        action_flag=CHANGE,
    )


def subject_of(account, domain="acme.dev") -> Subject:
    notes = Note.objects.filter(account=account, dossier__domain=domain)
    subject = Subject(kind="company", account_id=account.pk, texts={domain})
    subject.ids = {
        *notes.values_list("id", flat=True),
        *Compaction.objects.filter(account=account, dossier__domain=domain).values_list(
            "id", flat=True
        ),
    }
    subject.refs = {
        Dossier: set(
            Dossier.objects.filter(account=account, domain=domain).values_list("pk", flat=True)
        )
    }
    for note in notes:
        subject.ciphertexts.add(bytes(note.body_ciphertext))
        if note.title_ciphertext:
            subject.ciphertexts.add(bytes(note.title_ciphertext))
        if note.embedding is not None:
            subject.vectors.append(list(note.embedding))
    return subject


class Session:
    """REST as a signed-in person calls it: the session cookie and its CSRF token."""

    def __init__(self, member, openapi):
        self.client = Client(enforce_csrf_checks=True)
        self.client.force_login(member.user)
        self.client.get("/business-memory/")
        self.api = Api(self.client, None, openapi)

    def call(self, method, path, template, data=None):
        token = self.client.cookies["csrftoken"].value
        response = self.client.post(
            path, data=data, content_type="application/json", HTTP_X_CSRFTOKEN=token
        )
        self.api.check(response, method, template)
        return response


@pytest.fixture
def api(module_admin, openapi):
    return Session(module_admin, openapi)


def test_everything_of_the_domain_goes_and_nothing_else(api, admin_actor, rival_actor):
    researched(admin_actor)
    researched(rival_actor)
    save_note(
        admin_actor, domain="globex.io", body="Globex hires.", source_urls=["https://globex.io/"]
    )
    subject = subject_of(admin_actor.account)
    assert len(subject.ids) == 5  # three notes, the merged one, the compaction
    assert Note.objects.filter(account=admin_actor.account, status="archived").count() == 2
    assert leftovers(subject)  # the scan sees them before

    answer = api.call(
        "post", ERASE, ERASE, {"domain": "https://www.acme.dev/about", "confirm": "acme.dev"}
    )

    assert answer.status_code == 200, answer.content
    erased = answer.json()["data"]["erased"]
    assert erased["domain"] == "acme.dev"
    assert erased["counts"] == {
        "notes": 2,
        "archived_notes": 2,
        "compactions": 1,
        "admin_log_entries": 1,
        "audit_events": 4,  # three saves and the compaction
        "usage_events": 4,  # three saves and a recall
    }
    assert leftovers(subject) == []
    # Another company of the account, and the other account's research on the same one, stay.
    assert (
        Note.objects.filter(account=admin_actor.account, dossier__domain="globex.io").count() == 1
    )
    assert Note.objects.filter(account=rival_actor.account, dossier__domain="acme.dev").count() == 4
    assert AuditEvent.objects.filter(account=rival_actor.account, domain="acme.dev").exists()
    # Audited: who, when, counts, and the domain only as a keyed digest.
    erasure = Erasure.objects.get(pk=erased["erasure_id"])
    assert (erasure.kind, erasure.actor) == ("company", "admin@example.com")
    assert erasure.counts == erased["counts"]
    assert erasure.subject_digest == subject_digest(admin_actor.account.pk, "acme.dev")
    assert "acme" not in str(Erasure.objects.values().get(pk=erasure.pk))


def test_the_scan_fails_when_a_table_keeps_the_domain(admin_actor):
    researched(admin_actor)
    Remembered.objects.create(account=admin_actor.account, text="Lunch with ACME.DEV folks")
    subject = subject_of(admin_actor.account)
    erase_company(actor=admin_actor, domain="acme.dev")
    assert leftovers(subject) == ["forgetful.remembered.text: 1"]


def test_the_domain_typed_again_is_required(api, admin_actor):
    researched(admin_actor)
    for confirm in ("acme.com", "", "not a domain"):
        answer = api.call("post", ERASE, ERASE, {"domain": "acme.dev", "confirm": confirm})
        assert answer.status_code == 400
        assert "confirm" in answer.json()["error"]["details"]["fields"]
    answer = api.call("post", ERASE, ERASE, {"domain": "acme.dev"})
    assert answer.status_code == 400
    assert Note.objects.filter(dossier__domain="acme.dev").count() == 4
    assert not Erasure.objects.exists()


def test_only_a_person_who_is_a_module_admin_of_the_account_erases(
    api_for, openapi, member, module_admin, admin_actor, other_admin
):
    researched(admin_actor)
    both = {"domain": "acme.dev", "confirm": "acme.dev"}
    assert Session(member, openapi).call("post", ERASE, ERASE, both).status_code == 403
    # Another account's admin erases in their own account: nothing here changes.
    other = Session(other_admin, openapi).call("post", ERASE, ERASE, both)
    assert other.status_code == 200, other.content
    assert other.json()["data"]["erased"]["counts"]["notes"] == 0
    assert Note.objects.filter(account=admin_actor.account).count() == 4
    # An agent's token, even a module admin's with every scope, is refused: a person decides.
    agent = api_for(module_admin).call("post", ERASE, ERASE, both)
    assert agent.status_code == 403
    assert agent.json()["error"]["code"] == "person_required"
    assert Note.objects.filter(account=admin_actor.account).count() == 4


def test_the_page_shows_what_goes_and_asks_for_the_domain(module_admin, admin_actor, member):
    researched(admin_actor)
    page = "/companies/acme.dev/erase/"
    client = browser(module_admin)
    listed = client.get("/companies/acme.dev/notes/").content.decode()
    assert 'href="/companies/acme.dev/erase/"' in listed
    html = client.get(page).content.decode()
    assert "Archived notes (replaced by a compaction)" in html
    token = csrf(client, page)
    wrong = client.post(page, {"confirm": "acme.com", "csrfmiddlewaretoken": token})
    assert wrong.status_code == 200
    assert "type the company&#x27;s domain" in wrong.content.decode()
    assert Note.objects.filter(dossier__domain="acme.dev").count() == 4
    assert client.post(page, {"confirm": "acme.dev"}).status_code == 403  # no CSRF token
    done = client.post(page, {"confirm": "acme.dev", "csrfmiddlewaretoken": token})
    assert done.status_code == 302
    assert not Note.objects.filter(dossier__domain="acme.dev").exists()
    assert client.get(page).status_code == 404  # nothing left to erase
    # A member who is not a module admin: neither the link nor the page.
    researched(admin_actor, "globex.io")
    reader = browser(member)
    assert "/erase/" not in reader.get("/companies/globex.io/notes/").content.decode()
    assert reader.get("/companies/globex.io/erase/").status_code == 403


def test_the_page_never_shows_another_accounts_company(module_admin, rival_actor):
    researched(rival_actor, "rivalonly.dev")
    assert browser(module_admin).get("/companies/rivalonly.dev/erase/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_save_racing_the_erasure_never_brings_back_what_was_there():
    account = factories.account("race-co", name="Race Co")
    admin = Actor.for_member(factories.member(account, "racer@example.com", admin=True))
    for round_ in range(4):
        before = {
            str(save_note(admin, domain="acme.dev", body=f"round {round_} note {i}").note.id)
            for i in range(3)
        }
        start = threading.Barrier(2)
        saved: list = []

        def erase(start=start):
            start.wait()
            try:
                erase_company(actor=admin, domain="acme.dev")
            finally:
                connection.close()

        def save(start=start, saved=saved, round_=round_):
            start.wait()
            try:
                saved.append(save_note(admin, body=f"during round {round_}").note)
            finally:
                connection.close()

        threads = [threading.Thread(target=erase), threading.Thread(target=save)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rows = Note.objects.filter(account=account, dossier__domain="acme.dev")
        left = {str(pk) for pk in rows.values_list("id", flat=True)}
        assert not left & before  # nothing written before the erasure survives it
        assert left <= {str(saved[0].id)}  # the racing save waited, then wrote (or was erased)
        dossier = Dossier.objects.filter(account=account, domain="acme.dev").first()
        assert (dossier.active_note_count if dossier else 0) == len(left)
        erase_company(actor=admin, domain="acme.dev")
