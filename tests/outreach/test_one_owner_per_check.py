"""Each check on a call has one owner (``operations.execute``): the account's access, the
role, the arguments' schema and the write budget run once on a store, a recall and a search,
though the services check again for their direct callers (the admin, commands). A service
called without ``execute`` still checks (the vouch exists only on execute's actor)."""

import collections

import pytest

from outreach import access, operations, scopes
from outreach.access import Actor
from outreach.errors import NotModuleAdmin
from outreach.mcp.registry import registry
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs(monkeypatch):
    """How many times each check's own work ran."""
    counted = collections.Counter()

    def counting(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            counted[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counting(access, "check_outreach")
    counting(access, "check_module_admin")
    counting(operations.Operation, "argument_errors")
    counting(operations, "write_allowed")
    return counted


CALLS = [
    ("outreach_store_business_memory", {"key": "icp", "value": "B2B SaaS"}),
    ("outreach_recall_business_memory", {"key": "icp"}),
    ("outreach_search_business_memory", {"query": "who do we sell to"}),
    ("outreach_search_knowledge", {"query": "who do we sell to"}),
    ("outreach_recall_prospect_context", {"domain": "acme.dev"}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
def test_each_check_runs_once(module_admin, runs, tool, arguments):
    actor = Actor.for_member(module_admin)
    operation = registry.get(tool)
    if tool != "outreach_store_business_memory":
        operations.execute(
            registry.get(CALLS[0][0]), actor=actor, granted=scopes.ALL, arguments=CALLS[0][1]
        )
        runs.clear()
    operations.execute(operation, actor=actor, granted=scopes.ALL, arguments=arguments)
    assert runs["check_outreach"] == 1, runs
    assert runs["argument_errors"] == 1, runs
    assert runs["check_module_admin"] == (1 if operation.writes else 0), runs
    assert runs["write_allowed"] == (1 if operation.writes else 0), runs


def test_a_service_called_directly_still_checks(account):
    from prospect_memory.business.services.store import entry_store

    reader = Actor.for_member(factories.member(account, "reader@example.com"))
    with pytest.raises(NotModuleAdmin):
        entry_store(actor=reader, key="icp", value="x")


def test_a_vouch_is_for_its_call_only(account):
    """An actor vouched as an admin of one call is a new object; the member's own actor is
    never changed, so the next call checks afresh."""
    reader = Actor.for_member(factories.member(account, "reader@example.com"))
    vouched = reader.vouched_for(access.MODULE_ADMIN)
    assert reader.vouched == frozenset()
    assert vouched == reader  # the same person; the vouch is not part of who acts
    with pytest.raises(NotModuleAdmin):
        access.require_module_admin(reader)
