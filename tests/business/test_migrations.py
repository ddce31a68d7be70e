"""Migration business_memory 0005 fills the new columns from each entry's history."""

import importlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from prospect_memory.business.models import Entry
from prospect_memory.business.services.consolidate import consolidate
from prospect_memory.business.services.restore import merge_undo
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module(
    "prospect_memory.business.migrations.0005_kept_apart_and_written_at"
)
RULE = {"rule": "Enterprise deals need a champion and a security review first"}


def test_the_backfill_reads_each_entrys_history(admin_actor):
    entry_store(actor=admin_actor, key="rule:enterprise", value=RULE, confidence=90)
    entry_store(actor=admin_actor, key="rule:enterprise_deals", value=RULE, confidence=60)
    entry_store(actor=admin_actor, key="rule:pricing", value={"rule": "Annual only"})
    consolidate(account=admin_actor.account)
    merge_undo(actor=admin_actor, key="rule:enterprise_deals")
    # The job demotes the separated entry (its version now by "consolidation").
    later = timezone.now() + timedelta(days=31)
    consolidate(account=admin_actor.account, now=later)
    separated = Entry.objects.get(key="rule:enterprise_deals")
    assert (separated.written_by_label, separated.strategy) == ("consolidation", "demote")
    written = {e.key: e.written_at for e in Entry.objects.all()}
    # As the columns were before the migration filled them.
    Entry.objects.update(written_at=later + timedelta(days=1), kept_apart=False)

    with connection.cursor() as cursor:
        cursor.execute(MIGRATION.BACKFILL_WRITTEN_AT)
        cursor.execute(MIGRATION.BACKFILL_KEPT_APART)

    entries = {e.key: e for e in Entry.objects.all()}
    assert {k: e.kept_apart for k, e in entries.items()} == {
        "rule:enterprise": False,
        "rule:enterprise_deals": True,
        "rule:pricing": False,
    }
    # The last write by a person or an agent: the undo's (its version), not the demotion.
    undo_version = separated.versions.order_by("-version").first()
    assert entries["rule:enterprise_deals"].written_at == undo_version.written_at
    assert entries["rule:pricing"].written_at == written["rule:pricing"]
