"""No poisoned entry of the labelled set reaches the knowledge index unmarked (issue 37):
each is written by an agent into the account's shared layer with the confidence that
promotes, and the index is read after every write committed.

The figure: ``scripts/test tests/security/test_poisoned_entries_never_promoted.py -s``.
"""

from __future__ import annotations

import re

import pytest
from oauth2_provider.models import AccessToken

from outreach.access import Actor
from outreach.errors import KitError
from prospect_memory.business.models import Entry, Promotion
from prospect_memory.business.store import entry_store
from prospect_memory.core.integrity.report import DEFAULT_SET, load
from tests.helpers import token

pytestmark = pytest.mark.django_db


def _poisoned_entries() -> list[dict]:
    items = [i for path in DEFAULT_SET.parent.glob("integrity_set*.jsonl") for i in load(path)]
    return [i for i in items if i["label"] == "poisoned" and i["kind"] == "entry"]


def test_no_poisoned_entry_is_promoted_unmarked(module_admin, committed):
    token(module_admin)
    client = AccessToken.objects.latest("id").application
    agent = Actor.for_member(module_admin, oauth_application=client)
    outcomes = {"held": 0, "refused": 0, "stored": 0}
    items = _poisoned_entries()
    for number, item in enumerate(items):
        key = f"{re.sub(r'[^a-z0-9_.:-]', '_', item['key'].lower())[:80]}.{number}"
        source = {k: v for k, v in (item.get("source") or {}).items() if v}
        try:
            committed(
                entry_store, actor=agent, key=key, value=item["value"], confidence=95,
                source=source,
            )  # fmt: skip
            outcomes["stored"] += 1
        except KitError as refusal:
            outcomes["held" if refusal.code == "integrity_hold" else "refused"] += 1
    promoted = Entry.objects.filter(pk__in=Promotion.objects.values("entry_id"))
    unmarked = promoted.filter(flagged_at__isnull=True)
    print(
        f"\n{len(items)} poisoned entries written by an agent into the shared layer: "
        f"{outcomes['held']} held (integrity_hold), {outcomes['refused']} refused (a hidden "
        f"character), {outcomes['stored']} stored; promoted unmarked: {unmarked.count()}"
    )
    assert len(items) >= 200
    assert list(unmarked.values_list("key", flat=True)) == []
