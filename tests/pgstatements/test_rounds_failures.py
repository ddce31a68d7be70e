"""Every way a round trip of the statement toolkit can fail: a statement refused in the
middle of a pipeline, a unique key taken, a check at commit, a statement or lock timeout, a
connection dropped while the statements are out, the client's own work raising. After
each: the caller gets Django's database error (or the work's own), nothing of the round
trip stays written, and the connection serves the next call, or was discarded for the
next call to open a new one."""

import time

import psycopg
import pytest
from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction

import pgstatements as sql
from pgstatements import run, run_one
from tests.helpers import held_elsewhere
from tests.pgstatements.conftest import PROBE

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("probe_table")]


def _insert(row_id, ref=None):
    return (f"INSERT INTO {PROBE} (id, ref) VALUES (%s, %s)", [row_id, ref])  # noqa: S608


def _written() -> set[int]:
    return {row_id for (row_id,) in run_one(f"SELECT id FROM {PROBE}", None)}  # noqa: S608


def _backend() -> int:
    return run_one("SELECT pg_backend_pid()", None)[0][0]


def _idle() -> bool:
    return connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE


def _kill(pid: int) -> None:
    """End backend ``pid`` from a connection of its own, as an operator or a failover does."""
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_statement_refused_mid_pipeline_stops_the_rest_and_keeps_nothing():
    backend = _backend()
    with pytest.raises(DatabaseError, match="division by zero"):
        run(_insert(1), ("SELECT 1 / %s::int", [0]), _insert(2))
    assert _idle()
    assert _backend() == backend
    assert _written() == set()


def test_a_unique_key_taken_mid_pipeline_keeps_nothing():
    run(_insert(1))
    backend = _backend()
    with pytest.raises(IntegrityError, match="duplicate key"):
        run(_insert(2), _insert(1), _insert(3))
    assert _idle()
    assert _backend() == backend
    assert _written() == {1}


def test_a_check_at_commit_is_the_commits_error_and_keeps_nothing():
    # Outside a transaction the statements go as one of their own, so the deferred
    # foreign key that fails at its commit fails on the COMMIT statement: psycopg pairs
    # every result with its request, and the connection is kept.
    backend = _backend()
    with pytest.raises(IntegrityError, match="foreign key"):
        run(_insert(1), _insert(2, ref=-1))
    assert _idle()
    assert _backend() == backend
    assert _written() == set()
    assert run(_insert(3), _insert(4, ref=3)) == [None, None]
    assert _written() == {3, 4}


def test_reads_outside_a_transaction_see_one_snapshot():
    (first, second) = run(
        ("SELECT txid_current_if_assigned() IS NULL, statement_timestamp()", None),
        ("SELECT transaction_timestamp()", None),
    )
    assert first[0][1] >= second[0][0]  # both in the one transaction begun before them


def test_a_statement_timeout_is_an_operational_error_and_the_setting_ends_with_it():
    backend = _backend()
    with pytest.raises(OperationalError, match="statement timeout"):
        run(
            ("SELECT set_config('statement_timeout', '50ms', true)", None),
            _insert(1),
            ("SELECT pg_sleep(2)", None),
        )
    assert _idle()
    assert _backend() == backend
    assert _written() == set()
    assert run_one("SELECT current_setting('statement_timeout')", None) == [("0",)]


def test_a_lock_timeout_is_an_operational_error_and_keeps_nothing():
    run(_insert(1))
    with held_elsewhere(f"SELECT FROM {PROBE} WHERE id = 1 FOR UPDATE"):
        backend = _backend()
        with pytest.raises(OperationalError, match="lock"):
            run(
                ("SELECT set_config('lock_timeout', '50ms', true)", None),
                _insert(2),
                (f"SELECT FROM {PROBE} WHERE id = 1 FOR UPDATE", None),
            )
        assert _idle()
        assert _backend() == backend
    assert _written() == {1}


def test_a_connection_dropped_while_the_statements_are_out_is_discarded():
    backend = _backend()

    def drop():  # done after the statements were sent, before their results are read
        _kill(backend)
        time.sleep(0.2)

    with pytest.raises(OperationalError), sql.Meanwhile(drop):
        run(_insert(1), ("SELECT pg_sleep(1)", None), _insert(2))
    assert connection.connection is None  # discarded: the next call opens a new one
    assert _backend() != backend
    assert _written() == set()


def test_a_connection_dropped_before_a_single_statement_is_discarded():
    backend = _backend()
    _kill(backend)
    time.sleep(0.2)
    with pytest.raises(OperationalError):
        run(_insert(1))
    assert _backend() != backend
    assert _written() == set()


def test_a_connection_dropped_inside_a_callers_transaction_fails_the_transaction():
    backend = _backend()

    def write_after_the_drop():
        with transaction.atomic():
            run(_insert(1))
            _kill(backend)
            time.sleep(0.2)
            run(_insert(2), _insert(3))

    with pytest.raises(OperationalError):
        write_after_the_drop()
    assert _backend() != backend
    assert _written() == set()


def test_work_that_raises_while_a_statement_fails_leaves_no_transaction_open():
    def work():
        raise LookupError("the work's own failure")

    backend = _backend()
    meanwhile = sql.Meanwhile(work)
    # Whichever comes first is raised: the statement's failure, if its answer arrived
    # before the work's turn (the work is then not done), or the work's.
    with pytest.raises((LookupError, DatabaseError)) as raised, meanwhile:
        run(_insert(1), ("SELECT 1 / %s::int", [0]))
    assert isinstance(raised.value, LookupError) == meanwhile.done
    assert _idle()
    assert _backend() == backend
    assert _written() == set()
    assert run(_insert(2), ("SELECT %s::int", [5])) == [None, [(5,)]]


def test_work_that_raises_after_writes_were_sent_is_raised_and_they_stand_whole():
    # The statements were on their way before the work ran: they commit together (a
    # caller who must not write if its work fails does that work first).
    def work():
        raise LookupError("the work's own failure")

    with pytest.raises(LookupError), sql.Meanwhile(work):
        run(_insert(1), _insert(2, ref=1))
    assert _idle()
    assert _written() == {1, 2}


def test_a_prepared_statement_survives_the_rollback_of_a_failed_round_trip():
    # psycopg forgets its prepared statements after a ROLLBACK and deallocates them on the
    # server; sent alone, it cannot deallocate one prepared after it.
    statement = ("SELECT %s::int AS kit_prepared_after_failure", [1])
    for attempt in range(3):
        with pytest.raises(IntegrityError):
            run(_insert(10 + attempt), _insert(20 + attempt, ref=-1))
        assert run(statement, statement) == [[(1,)], [(1,)]]
        assert run_one(*statement) == [(1,)]


class _Unsendable:
    """A value psycopg has no way to send: it fails on the client, after BEGIN went out."""


def test_a_failure_on_the_clients_side_after_a_write_went_out_keeps_nothing():
    backend = _backend()
    with pytest.raises(DatabaseError):
        run(_insert(1), _insert(2, ref=_Unsendable()))
    assert _idle()  # the transaction it began is rolled back, not left open
    assert _backend() == backend
    run(_insert(7), _insert(8))  # a later round trip commits only its own rows
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        seen = [row[0] for row in other.execute(f"SELECT id FROM {PROBE} ORDER BY id")]  # noqa: S608
    assert seen == [7, 8]
