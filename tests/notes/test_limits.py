"""Quotas and refusals: daily saves, notes per domain, roles, add-on, subscription."""

from datetime import UTC, datetime, timedelta

import pytest

from outreach.access import Actor
from outreach.errors import AddonRequired, NotModuleAdmin, SubscriptionInactive
from prospect_memory.notes.errors import DailyLimitReached, DomainNoteLimitReached
from prospect_memory.notes.models import DailySaveCount, Note
from prospect_memory.notes.rules import utc_today
from prospect_memory.notes.selectors import dossier_recall
from prospect_memory.notes.services.compaction import dossier_compact
from tests import factories
from tests.factories import save_note

pytestmark = pytest.mark.django_db


def test_daily_limit_refuses_and_says_when_saving_opens(admin_actor, limits):
    limits(DAILY_SAVE_LIMIT=3)
    for i in range(3):
        save_note(admin_actor, domain=f"company{i}.dev")
    with pytest.raises(DailyLimitReached) as info:
        save_note(admin_actor, domain="another.dev")
    error = info.value
    tomorrow = datetime.combine(utc_today() + timedelta(days=1), datetime.min.time(), UTC)
    assert error.http_status == 429
    assert error.details == {"limit": 3, "resets_at": tomorrow.isoformat().replace("+00:00", "Z")}
    assert error.details["resets_at"] in error.message
    assert Note.objects.count() == 3
    assert DailySaveCount.objects.get().saves == 3


def test_daily_limit_is_per_account_and_per_utc_day(admin_actor, rival_actor, limits):
    limits(DAILY_SAVE_LIMIT=1)
    save_note(admin_actor)
    save_note(rival_actor)  # another account has its own quota
    DailySaveCount.objects.filter(account=admin_actor.account).update(
        day=utc_today() - timedelta(days=1)
    )
    save_note(admin_actor, body="a new day")  # yesterday's saves do not count


def test_default_limits_are_the_spec():
    from prospect_memory.core.conf import DEFAULTS as CORE
    from prospect_memory.notes.conf import DEFAULTS

    assert DEFAULTS["DAILY_SAVE_LIMIT"] == 200
    assert DEFAULTS["DOMAIN_NOTE_LIMIT"] == 50
    assert DEFAULTS["BODY_MAX_BYTES"] == 10_240
    assert DEFAULTS["TITLE_MAX_CHARS"] == 120
    assert DEFAULTS["STALE_AFTER_DAYS"] == 30
    assert DEFAULTS["COMPACTION_SUGGESTED_ABOVE"] == 8
    assert DEFAULTS["OVERLAP_PAIR_WINDOW"] == 20
    assert DEFAULTS["RECALL_PAYLOAD_MAX_BYTES"] == 102_400
    assert CORE["EMBEDDING_INPUT_MAX_BYTES"] == 6_144


def test_fifty_active_notes_per_domain_then_compaction_is_the_way_back(admin_actor):
    for i in range(50):
        save_note(admin_actor, body=f"finding number {i}", source_urls=[f"https://acme.dev/{i}"])
    with pytest.raises(DomainNoteLimitReached) as info:
        save_note(admin_actor, body="one too many")
    assert info.value.http_status == 409
    assert info.value.details == {"domain": "acme.dev", "note_count": 50, "limit": 50}
    assert "expected_note_count=50" in info.value.message
    save_note(admin_actor, domain="other.dev")  # other domains are unaffected

    result = dossier_compact(
        actor=admin_actor, domain="acme.dev", expected_note_count=50, body="All fifty, merged."
    )
    assert result.note_count == 1
    assert save_note(admin_actor, body="room again").note_count == 2


def test_refused_save_does_not_use_up_the_daily_quota(admin_actor, limits):
    limits(DOMAIN_NOTE_LIMIT=1)
    save_note(admin_actor)
    with pytest.raises(DomainNoteLimitReached):
        save_note(admin_actor, body="refused")
    assert DailySaveCount.objects.get().saves == 1


def test_compaction_suggested_above_eight_notes(admin_actor):
    results = [save_note(admin_actor, body=f"fact {i}") for i in range(9)]
    assert [r.compaction_suggested for r in results][-2:] == [False, True]
    assert dossier_recall(actor=admin_actor, domain="acme.dev").compaction_suggested is True


def test_member_who_is_not_module_admin_cannot_save_or_compact(member):
    reader = Actor.for_member(member)
    with pytest.raises(NotModuleAdmin) as info:
        save_note(reader)
    assert info.value.code == "not_module_admin"
    with pytest.raises(NotModuleAdmin):
        dossier_compact(actor=reader, domain="acme.dev", expected_note_count=0, body="x")
    # Reading is allowed.
    assert dossier_recall(actor=reader, domain="acme.dev").known is False


@pytest.mark.parametrize(
    ("changes", "error", "code"),
    [
        ({"outreach_addon": False}, AddonRequired, "addon_required"),
        ({"subscription_status": "canceled"}, SubscriptionInactive, "subscription_inactive"),
        ({"subscription_status": "past_due"}, SubscriptionInactive, "subscription_inactive"),
    ],
)
def test_account_without_addon_or_active_subscription_is_refused(changes, error, code):
    account = factories.account(**changes)
    actor = Actor.for_member(factories.member(account, admin=True))
    with pytest.raises(error) as info:
        save_note(actor)
    assert info.value.code == code
    with pytest.raises(error):
        dossier_recall(actor=actor, domain="acme.dev")
