"""The limits hold under concurrency: real threads, each with its own PostgreSQL connection."""

import threading

import pytest
from django.db import connection

from outreach.errors import KitError
from prospect_memory.notes.models import DailySaveCount, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests.factories import save_note

# Real threads racing: seconds each (the slow marker).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def race(*calls):
    """Run the calls at the same moment in threads; return each one's result or error."""
    barrier = threading.Barrier(len(calls))
    outcomes = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            outcomes[index] = call()
        except KitError as error:
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def errors(outcomes):
    return [o.code for o in outcomes if isinstance(o, KitError)]


def test_only_one_save_wins_the_fiftieth_slot(admin_actor):
    for i in range(49):
        save_note(admin_actor, body=f"fact {i}")
    outcomes = race(*[lambda i=i: save_note(admin_actor, body=f"racer {i}") for i in range(8)])
    assert errors(outcomes).count("domain_note_limit_reached") == 7
    assert Note.objects.filter(status="active").count() == 50


def test_only_one_save_wins_the_last_daily_save(admin_actor, limits):
    limits(DAILY_SAVE_LIMIT=200)
    DailySaveCount.objects.create(account=admin_actor.account, day=_today(), saves=199)
    outcomes = race(
        *[lambda i=i: save_note(admin_actor, domain=f"company{i}.dev", body="x") for i in range(8)]
    )
    assert errors(outcomes).count("daily_limit_reached") == 7
    assert Note.objects.count() == 1
    assert DailySaveCount.objects.get().saves == 200


def test_a_save_racing_a_compaction_is_never_swallowed(admin_actor):
    orders = {"save first": 0, "compaction first": 0}
    for round_ in range(12):
        domain = f"round{round_}.dev"
        for i in range(3):
            save_note(admin_actor, domain=domain, body=f"fact {i}")
        compacted, saved = race(
            lambda domain=domain: dossier_compact(
                actor=admin_actor, domain=domain, expected_note_count=3, body="merged"
            ),
            lambda domain=domain: save_note(admin_actor, domain=domain, body="a new finding"),
        )
        assert not isinstance(saved, KitError), saved
        new_note = Note.objects.get(id=saved.note.id)
        # Whatever the order, the new finding stays active and is never archived.
        assert new_note.status == "active"
        assert new_note.superseded_by_id is None
        active = Note.objects.filter(dossier__domain=domain, status="active").count()
        if isinstance(compacted, KitError):
            assert compacted.code == "note_count_mismatch"
            assert compacted.details["current"] == 4
            assert active == 4
            orders["save first"] += 1
        else:
            assert active == 2  # the merged note and the new finding
            orders["compaction first"] += 1
    print("interleavings seen:", orders)


def _today():
    from prospect_memory.notes.rules import utc_today

    return utc_today()
