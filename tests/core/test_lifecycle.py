"""The lifecycle contract (``core/lifecycle/``): a memory joins every export, import,
erasure and retention run by registering, without the lifecycle naming it.

The third memory here keeps its "sketches" in the account's usage events (a model every
account has), so the test needs no table of its own."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from prospect_memory.core import lifecycle as contract
from prospect_memory.core.lifecycle import MemoryLifecycle, Rule, record_types
from prospect_memory.core.lifecycle.fields import ImportRefused
from prospect_memory.core.models import Erasure, UsageEvent
from prospect_memory.lifecycle.erase import company_footprint, erase_account, erase_company
from prospect_memory.lifecycle.export import export_lines
from prospect_memory.lifecycle.imports import import_lines
from prospect_memory.lifecycle.retention import apply_retention, rules
from tests import factories

pytestmark = pytest.mark.django_db


def test_the_memories_register_in_order_and_name_the_files_record_types():
    assert [memory.name for memory in contract.lifecycles()] == ["notes", "business"]
    assert record_types() == ("dossier", "note", "compaction", "entry", "entry_version")


class Sketches:
    """A memory added later: what the lifecycle asked of it, and what it answered."""

    def __init__(self) -> None:
        self.held: dict[int, list[str]] = {}
        self.imported: list[dict] = []
        self.finished = 0
        self.asked: list[tuple] = []

    def records(self, scope):
        yield {"type": "sketch", "id": "1", "text": f"of {scope.account.slug}"}

    def importer(self, session):
        memory = self

        class Importer:
            builders = {"sketch": self._build(session)}
            models = (UsageEvent,)

            def stored(self, model, rows):
                memory.asked.append(("stored", model, len(rows)))

            def finish(self):
                memory.finished += 1

        return Importer()

    def _build(self, session):
        def build(fields):
            self.imported.append(fields.data)
            return UsageEvent(
                account=session.account,
                kind="sketch",
                subject=fields.text("text"),
                created_at=timezone.now(),
            )

        return build

    def lifecycle(self) -> MemoryLifecycle:
        return MemoryLifecycle(
            name="sketches",
            record_types=("sketch",),
            records=self.records,
            held=lambda account: self.held.get(account.pk, []),
            importer=self.importer,
            company_footprint=lambda account, domain: {"sketches": 2},
            erase_company=self._erase_company,
            member_leaving=lambda member, names: self.asked.append(("leaving", names)) or {},
            lock_account=lambda account_id: self.asked.append(("lock", account_id)),
            retention_rules=lambda: [Rule("sketches", "Sketches", 7)],
            retain=lambda scope: {"sketches": scope.days["sketches"]},
        )

    def _erase_company(self, actor, domain):
        self.asked.append(("company", actor.account.pk, domain))
        return {"sketches": 2}


@pytest.fixture
def sketches(monkeypatch):
    """The third memory, registered as an app would at ready(), and gone after the test."""
    memory = Sketches()
    monkeypatch.setattr(contract, "_memories", [*contract.lifecycles()])
    lifecycle = memory.lifecycle()
    contract.register_lifecycle(lifecycle)
    contract.register_lifecycle(lifecycle)  # ready() may run twice: once
    return memory


def test_a_registered_memory_is_exported_after_the_others_and_counted(sketches):
    account = factories.account()
    lines = [json.loads(line) for line in export_lines(account)]
    assert [line["type"] for line in lines] == ["kit-export", "sketch", "manifest"]
    assert lines[-1]["counts"] == dict.fromkeys(record_types(), 0) | {"sketch": 1}


def test_its_records_are_imported_by_it_and_it_finishes_the_import(sketches):
    source, target = factories.account(), factories.account()
    counts = import_lines(list(export_lines(source)), target)
    assert counts["sketch"] == 1
    assert sketches.imported == [{"type": "sketch", "id": "1", "text": f"of {source.slug}"}]
    assert ("stored", UsageEvent, 1) in sketches.asked
    assert sketches.finished == 1
    assert UsageEvent.objects.get(account=target, kind="sketch").subject == f"of {source.slug}"


def test_an_import_refuses_an_account_that_holds_a_registered_memory(sketches):
    source, target = factories.account(), factories.account()
    lines = list(export_lines(source))
    sketches.held[target.pk] = ["sketches"]
    with pytest.raises(ImportRefused, match=r"already holds sketches; an export imports"):
        import_lines(lines, target)


def test_a_company_erasure_asks_it_and_records_what_it_removed(sketches, admin_actor):
    assert company_footprint(admin_actor, "acme.dev")["sketches"] == 2
    erased = erase_company(actor=admin_actor, domain="https://www.Acme.dev/about")
    assert ("company", admin_actor.account.pk, "acme.dev") in sketches.asked
    assert erased.counts["sketches"] == 2
    assert Erasure.objects.get(pk=erased.erasure_id).counts["sketches"] == 2


def test_a_member_leaving_and_an_account_erased_ask_it(sketches, account):
    leaver = factories.member(account, "leaver@example.com")
    leaver.delete()
    assert ("leaving", {"leaver@example.com"}) in sketches.asked
    other = factories.account()
    erase_account(other, by="test")
    assert ("lock", other.pk) in sketches.asked


def test_retention_shows_its_rule_and_counts_what_it_removed(sketches):
    assert "sketches" in [rule.name for rule in rules()]
    run = apply_retention(now=timezone.now() + timedelta(days=1))
    assert run.removed["sketches"] == 7


def test_a_name_and_a_record_type_are_one_memorys(sketches):
    """The import hands each record to the memory of its type: another memory taking a
    name or a type already taken (or the file's own header and manifest) could not be told
    apart, so it is refused at ready(); so is an importer that builds a type its memory
    does not export."""

    def memory(name: str, types: tuple[str, ...]) -> MemoryLifecycle:
        return MemoryLifecycle(
            name, types, lambda scope: iter(()), lambda a: [], Sketches().importer
        )

    for clash, match in [
        (memory("sketches", ("drawing",)), "another memory is registered as 'sketches'"),
        (memory("clash", ("note",)), "'clash' declares record types already taken: note"),
        (memory("clash", ("manifest",)), "already taken: manifest"),
        (memory("clash", ("kit-export",)), "already taken: kit-export"),
    ]:
        with pytest.raises(ValueError, match=match):
            contract.register_lifecycle(clash)
    assert [m.name for m in contract.lifecycles()] == ["notes", "business", "sketches"]


def test_an_importer_builds_only_what_its_memory_exports(monkeypatch, account):
    monkeypatch.setattr(contract, "_memories", [*contract.lifecycles()])
    # It declares "sketch" but would take the notes' records too.
    greedy = Sketches()
    taker = greedy.importer

    def importer(session):
        built = taker(session)
        built.builders = {**built.builders, "note": built.builders["sketch"]}
        return built

    contract.register_lifecycle(
        MemoryLifecycle("greedy", ("sketch",), greedy.records, lambda a: [], importer)
    )
    with pytest.raises(ValueError, match="'greedy' builds records it does not export: note"):
        import_lines(list(export_lines(factories.account())), account)
