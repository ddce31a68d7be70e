"""Retention (SPEC 16): audit and usage events, evictions and archived notes each kept for
their setting's days by a daily job (on a real worker), shown on the memory health page;
an account closed longer ago than its retention erased whole, by the job."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from kit.celery import app
from outreach.access import Actor
from outreach.models import Account, Member
from prospect_memory import tasks
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion
from prospect_memory.business.services.store import entry_store
from prospect_memory.core.models import Erasure, RetentionRun, UsageEvent
from prospect_memory.lifecycle.retention import apply_retention, erase_closed_accounts
from prospect_memory.notes.models import AuditEvent, Compaction, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests import factories
from tests.factories import save_note
from tests.forgetful.models import Remembered
from tests.helpers import bearer, wait_for
from tests.lifecycle.scan import Subject, leftovers

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


def aged(queryset, days: int, field: str = "created_at") -> None:
    queryset.update(**{field: timezone.now() - days * DAY})


def compacted(actor, domain: str):
    for i in range(2):
        save_note(actor, domain=domain, body=f"{domain} {i}")
    return dossier_compact(
        actor=actor, domain=domain, expected_note_count=2, body=f"{domain}: merged"
    )


def test_a_compaction_undone_and_made_again_keeps_its_notes(admin_actor, settings):
    """Retention makes final only what an old compaction archived and still holds."""
    from prospect_memory.notes.services.compaction import compaction_restore

    settings.LIFECYCLE = {"ARCHIVED_NOTES_DAYS": 60}
    first = compacted(admin_actor, "acme.dev")
    compaction_restore(actor=admin_actor, compaction_id=first.compaction_id)
    again = dossier_compact(
        actor=admin_actor, domain="acme.dev", expected_note_count=2, body="acme.dev: merged again"
    )
    aged(Compaction.objects.filter(pk=first.compaction_id), 200)
    assert apply_retention().removed["archived_notes"] == 0
    assert not Compaction.objects.filter(pk=first.compaction_id).exists()
    restored = compaction_restore(actor=admin_actor, compaction_id=again.compaction_id)
    assert len(restored.restored_note_ids) == 2


def test_each_rule_keeps_its_days_and_no_more(admin_actor, rival_actor, settings):
    settings.LIFECYCLE = {
        "AUDIT_EVENTS_DAYS": 30,
        "USAGE_EVENTS_DAYS": 7,
        "ARCHIVED_NOTES_DAYS": 60,
    }
    compacted(admin_actor, "old.dev")
    compacted(rival_actor, "young.dev")
    aged(Compaction.objects.filter(dossier__domain="old.dev"), 61)
    aged(AuditEvent.objects.filter(domain="old.dev"), 31)
    aged(UsageEvent.objects.filter(subject="old.dev"), 8)
    entry_store(actor=admin_actor, key="gone_soon", value=1)
    aged(EntryEvent.objects.all(), 31)

    run = apply_retention()

    assert run.removed["archived_notes"] == 2
    assert run.removed["audit_events"] == 4  # two saves, a compaction and a store
    assert run.removed["usage_events"] == 2
    # The old compaction is final: its archived notes and the record that undid it go; the
    # merged note stays. The younger account's compaction can still be undone.
    assert Note.objects.filter(dossier__domain="old.dev").count() == 1
    assert not Compaction.objects.filter(dossier__domain="old.dev").exists()
    assert Note.objects.filter(dossier__domain="young.dev", status="archived").count() == 2
    assert AuditEvent.objects.filter(domain="young.dev").count() == 3
    assert RetentionRun.objects.get(pk=run.pk).finished_at is not None


def test_zero_days_keeps_for_ever(admin_actor, account, settings):
    settings.LIFECYCLE = {"AUDIT_EVENTS_DAYS": 0, "USAGE_EVENTS_DAYS": 0, "CLOSED_ACCOUNT_DAYS": 0}
    Account.objects.filter(pk=account.pk).update(closed_at=timezone.now() - 5000 * DAY)
    assert erase_closed_accounts() == []
    save_note(admin_actor)
    aged(AuditEvent.objects.all(), 5000)
    aged(UsageEvent.objects.all(), 5000)
    removed = apply_retention().removed
    assert "audit_events" not in removed
    assert AuditEvent.objects.exists()
    assert UsageEvent.objects.exists()


def test_the_health_page_says_what_is_kept_and_when_the_job_ran(module_admin, settings):
    settings.LIFECYCLE = {"USAGE_EVENTS_DAYS": 14}
    browser = Client()
    browser.force_login(module_admin.user)
    before = browser.get("/health/").content.decode()
    assert 'id="retention-health"' in before
    assert "it has not run yet" in before
    apply_retention()
    html = browser.get("/health/").content.decode()
    assert "14 days" in html
    assert "it last ran" in html


def everything_of(account: Account) -> Subject:
    subject = Subject(kind="account", account_id=account.pk, texts={account.slug})
    subject.refs = {Account: {account.pk}}
    subject.numbers = {account.pk}
    subject.ids = {
        *Note.objects.filter(account=account).values_list("id", flat=True),
        *Entry.objects.filter(account=account).values_list("id", flat=True),
        *Compaction.objects.filter(account=account).values_list("id", flat=True),
    }
    for note in Note.objects.filter(account=account):
        subject.ciphertexts.add(bytes(note.body_ciphertext))
        if note.embedding is not None:
            subject.vectors.append(list(note.embedding))
    for row in [
        *Entry.objects.filter(account=account),
        *EntryVersion.objects.filter(account=account),
    ]:
        subject.ciphertexts.add(bytes(row.value_ciphertext))
    return subject


def test_a_closed_account_is_erased_whole_after_its_retention(
    client, account, module_admin, member, admin_actor, rival_actor, settings
):
    settings.LIFECYCLE = {"CLOSED_ACCOUNT_DAYS": 30}
    compacted(admin_actor, "acme.dev")
    entry_store(actor=admin_actor, key="icp_definition", value={"headcount": "50-500"})
    entry_store(
        actor=admin_actor, key="icp_definition", value={"headcount": "any"}, expected_version=1
    )
    entry_store(actor=Actor.for_member(member), key="mine", value="x", layer="member")
    Remembered.objects.create(account=account, text="acme-sales lunch")  # found by its account
    save_note(rival_actor, domain="acme.dev")
    headers = bearer(module_admin)
    subject = everything_of(account)
    account.closed_at = timezone.now() - 29 * DAY
    account.save()
    assert erase_closed_accounts() == []  # not yet

    account.closed_at = timezone.now() - 31 * DAY
    account.save()
    [erased] = erase_closed_accounts()

    assert leftovers(subject) == []
    assert not Account.objects.filter(pk=subject.account_id).exists()
    assert not Member.objects.filter(account_id=subject.account_id).exists()
    assert client.get("/api/v1/business-memory/entries", **headers).status_code == 401
    # Users stay (a person may hold seats elsewhere); the other account is untouched.
    module_admin.user.refresh_from_db()
    assert Note.objects.filter(account=rival_actor.account).count() == 1
    erasure = Erasure.objects.get(pk=erased.erasure_id)
    assert (erasure.kind, erasure.actor, erasure.account_ref) == (
        "account",
        "retention",
        subject.account_id,
    )
    assert erasure.counts["prospect_memory.note"] == 3


@pytest.mark.django_db(transaction=True)
def test_the_daily_jobs_run_on_a_worker(worker):
    account = factories.account("closing-co", name="Closing Co")
    admin = Actor.for_member(factories.member(account, "closer@example.com", admin=True))
    save_note(admin, domain="acme.dev")
    Account.objects.filter(pk=account.pk).update(closed_at=timezone.now() - 400 * DAY)
    tasks.erase_closed_accounts.delay()
    wait_for(lambda: not Account.objects.filter(pk=account.pk).exists(), what="the erasure")
    tasks.apply_retention.delay()
    wait_for(
        lambda: RetentionRun.objects.filter(finished_at__isnull=False).exists(), what="retention"
    )
    assert not Note.objects.filter(account_id=account.pk).exists()


def test_beat_runs_both_jobs_daily():
    jobs = {e["task"]: e["schedule"] for e in app.conf.beat_schedule.values()}
    assert jobs["prospect_memory.tasks.apply_retention"] == 24 * 3600.0
    assert jobs["prospect_memory.tasks.erase_closed_accounts"] == 24 * 3600.0


def test_the_docs_name_the_defaults_of_the_settings():
    from pathlib import Path

    from prospect_memory.lifecycle.conf import DEFAULTS

    docs = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    retention = (
        "AUDIT_EVENTS_DAYS",
        "USAGE_EVENTS_DAYS",
        "ARCHIVED_NOTES_DAYS",
        "CLOSED_ACCOUNT_DAYS",
    )
    for key in retention:
        [row] = [line for line in docs.splitlines() if f"`{key}`" in line and "|" in line]
        assert f"| {DEFAULTS[key]} days |" in row, key


def test_a_closed_account_is_read_and_exported_but_not_written(client, account, module_admin):
    save_note(Actor.for_member(module_admin))
    Account.objects.filter(pk=account.pk).update(closed_at=timezone.now())
    headers = bearer(module_admin)
    note = {
        "domain": "acme.dev",
        "body": "Acme opened an office in Lyon.",
        "source_urls": ["https://acme.dev/lyon"],
        "observed_at": timezone.now().date().isoformat(),
    }
    refused = client.post("/api/v1/notes", note, content_type="application/json", **headers)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "account_closed"
    assert client.get("/api/v1/recall", {"domain": "acme.dev"}, **headers).status_code == 200
    exported = client.get("/api/v1/export", **headers)
    assert exported.status_code == 200
    assert b'"type":"manifest"' in b"".join(exported.streaming_content).replace(b" ", b"")
    from prospect_memory.lifecycle.erase import erase_company

    erase_company(actor=Actor.for_member(module_admin), domain="acme.dev")  # still possible
    assert not Note.objects.filter(account=account).exists()
