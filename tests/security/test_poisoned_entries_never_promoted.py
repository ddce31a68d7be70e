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
from prospect_memory.business.services.store import entry_store
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


def test_poisoned_text_kept_from_before_the_check_leaves_the_index(
    admin_actor, committed, django_capture_on_commit_callbacks
):
    """The other way into the index: clean entries promoted, then holding poisoned text
    from before the check (an upgrade): the scan flags them and takes them out."""
    import json

    from prospect_memory.business.services.integrity import entries_rescan

    items = _poisoned_entries()[:40]
    for number, _ in enumerate(items):
        committed(
            entry_store, actor=admin_actor, key=f"clean.{number}", value={"v": "ok"}, confidence=95
        )
    assert Promotion.objects.count() == len(items)
    for number, item in enumerate(items):
        entry = Entry.objects.get(key=f"clean.{number}")
        entry.value_json = json.dumps(item["value"], ensure_ascii=False)
        entry.integrity_reviewed_at = None
        entry.save()
    with django_capture_on_commit_callbacks(execute=True):
        entries_rescan()
    promoted = Entry.objects.filter(pk__in=Promotion.objects.values("entry_id"))
    assert list(promoted.filter(flagged_at__isnull=True).values_list("key", flat=True)) == []
    assert not promoted.exists()
