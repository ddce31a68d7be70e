"""Writes sent before they are known to stand: written only when their condition holds,
the steps after them only with them, their times from the database's clock."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from outreach.guarded import Stamp, insert_for_written, insert_when, written_and
from pgstatements import run
from prospect_memory.core.models import UsageEvent

pytestmark = pytest.mark.django_db


def usage(account, subject, **fields):
    return UsageEvent(account=account, memory="business", kind="store", subject=subject, **fields)


def test_stamps_keep_their_kind_and_offset():
    now = Stamp.now(UTC)
    later = now + timedelta(seconds=60)
    assert isinstance(later, Stamp)
    assert later - now == timedelta(seconds=60)


def test_a_stamp_is_the_statements_clock_and_a_time_given_stays_as_given(account):
    now = Stamp.now(UTC) - timedelta(days=1)  # a clock a day behind the database's
    stamped = usage(account, "stamped", created_at=now + timedelta(seconds=5))
    day_ago = datetime.fromtimestamp(now.timestamp(), UTC)  # a plain time, not a stamp
    given = usage(account, "given", created_at=day_ago)
    for row in (stamped, given):
        write = insert_when(row, now=now, when="true", params=[], returning=["created_at"])
        run(write)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement_timestamp()")
        database_now = cursor.fetchone()[0]
    times = dict(UsageEvent.objects.values_list("subject", "created_at"))
    # Written as the statement's clock, 5 s on, a moment before this statement's clock.
    assert timedelta(seconds=4) < times["stamped"] - database_now <= timedelta(seconds=5)
    assert times["given"] == day_ago


def test_nothing_is_written_when_the_condition_fails_nor_the_steps_after_it(account):
    now = Stamp.now(UTC)
    for holds, subject in ((False, "refused"), (True, "written")):
        first = insert_when(
            usage(account, subject, created_at=now),
            now=now,
            when="%s",
            params=[holds],
            returning=["subject"],
        )
        after = insert_for_written(usage(account, f"{subject}, after", created_at=now), now=now)
        (rows,) = run(written_and(first, after))
        assert rows == ([(subject,)] if holds else [])
    subjects = set(UsageEvent.objects.values_list("subject", flat=True))
    assert subjects == {"written", "written, after"}


@pytest.mark.parametrize("holds", [True, False])
def test_what_is_done_when_nothing_was_written_is_done_once_and_only_then(account, holds):
    """``unwritten`` runs once if the write wrote nothing (here: a setting for the rest of
    the transaction), and its row of nulls is not among the rows written."""
    from django.db import transaction

    from outreach.guarded import rows_written

    now = Stamp.now(UTC)
    first = insert_when(
        usage(account, "maybe", created_at=now),
        now=now,
        when="%s",
        params=[holds],
        returning=["subject", "created_at"],
    )
    after = insert_for_written(usage(account, "maybe, after", created_at=now), now=now)
    unwritten = "set_config('kit.unwritten', (current_setting('kit.unwritten', true) || 'x'), true)"
    setting = "SELECT current_setting('kit.unwritten')"
    with transaction.atomic():
        run(("SELECT set_config('kit.unwritten', '', true)", None))
        rows, ((unwritten_ran,),) = run(
            written_and(first, after, unwritten=unwritten), (setting, None)
        )
    written = rows_written(rows)
    assert [row[0] for row in written] == (["maybe"] if holds else [])
    assert unwritten_ran == ("" if holds else "x")
    assert UsageEvent.objects.filter(subject__startswith="maybe").count() == (2 if holds else 0)


def test_a_step_of_a_locked_statement_stamped_with_the_statements_clock_is_refused(account):
    from outreach.guarded import HELD, HELD_CLOCK

    now = Stamp.now(UTC)
    lock = ("SELECT FROM prospect_memory_usageevent LIMIT 0 FOR UPDATE", [])
    held = insert_when(
        usage(account, "a", created_at=now), now=now, when=HELD, params=[],
        returning=["subject"], clock=HELD_CLOCK,
    )  # fmt: skip
    early = insert_for_written(usage(account, "b", created_at=now), now=now)
    with pytest.raises(ValueError, match="HELD_CLOCK"):
        written_and(held, early, locked=lock)
    (rows,) = run(written_and(held, locked=lock))
    assert rows == []  # nothing locked: nothing written
