"""The lifecycle contract (``core/lifecycle.py``): a memory joins every export and the
import's emptiness check by registering, without the lifecycle naming it."""

from __future__ import annotations

import json

import pytest

from prospect_memory.core import lifecycle as contract
from prospect_memory.core.lifecycle import MemoryLifecycle, record_types
from prospect_memory.lifecycle.export import export_lines
from prospect_memory.lifecycle.imports import import_lines
from prospect_memory.lifecycle.lines import ImportRefused
from tests import factories


def test_the_memories_register_in_order_and_name_the_files_record_types():
    assert [memory.name for memory in contract.lifecycles()] == ["notes", "business"]
    assert record_types() == ("dossier", "note", "compaction", "entry", "entry_version")


@pytest.fixture
def sketches(monkeypatch):
    """A third memory, registered as an app would at ready(), and gone after the test."""
    held: dict[int, list[str]] = {}

    def records(scope):
        yield {"type": "sketch", "account": scope.account.slug, "member": bool(scope.member)}

    memory = MemoryLifecycle("sketches", ("sketch",), records, lambda a: held.get(a.pk, []))
    monkeypatch.setattr(contract, "_memories", [*contract.lifecycles()])
    contract.register_lifecycle(memory)
    contract.register_lifecycle(memory)  # ready() may run twice: registered once
    return held


@pytest.mark.django_db
def test_a_registered_memory_is_exported_after_the_others_and_counted(sketches):
    account = factories.account()
    lines = [json.loads(line) for line in export_lines(account)]
    assert [line["type"] for line in lines] == ["kit-export", "sketch", "manifest"]
    assert lines[1] == {"type": "sketch", "account": account.slug, "member": False}
    assert lines[-1]["counts"] == {
        "dossier": 0,
        "note": 0,
        "compaction": 0,
        "entry": 0,
        "entry_version": 0,
        "sketch": 1,
    }


@pytest.mark.django_db
def test_an_import_refuses_an_account_that_holds_a_registered_memory(sketches):
    source, target = factories.account(), factories.account()
    lines = list(export_lines(source))
    sketches[target.pk] = ["sketches"]
    with pytest.raises(ImportRefused, match=r"already holds sketches; an export imports"):
        import_lines(lines, target)
