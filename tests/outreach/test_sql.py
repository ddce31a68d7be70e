"""Hot-path statements: prepared once per connection, pipelined, errors like Django's."""

import pytest
from django.db import ProgrammingError, connection

from outreach.sql import run, run_one

pytestmark = pytest.mark.django_db


def _prepared(fragment: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT statement FROM pg_prepared_statements WHERE statement LIKE %s",
            [f"%{fragment}%"],
        )
        return [row[0] for row in cursor.fetchall()]


def test_a_statement_with_parameters_is_prepared_once_and_reused():
    sql = "SELECT %(n)s::int + 1 AS kit_prepared_probe"
    assert run_one(sql, {"n": 1}) == [(2,)]
    assert run_one(sql, {"n": 41}) == [(42,)]
    assert len(_prepared("kit_prepared_probe")) == 1


def test_several_statements_come_back_in_order_with_their_own_rows():
    first, second, nothing = run(
        ("SELECT generate_series(1, %(n)s)", {"n": 3}),
        ("SELECT %(word)s::text", {"word": "kit"}),
        ("SELECT 1 WHERE false", None),
    )
    assert first == [(1,), (2,), (3,)]
    assert second == [("kit",)]
    assert nothing == []


def test_binary_results_load_as_the_orm_would(account):
    (row,) = run_one(
        "SELECT %(id)s::bigint, now(), current_date, '\\x0102'::bytea, '[1, \"a\"]'::jsonb",
        {"id": account.pk},
    )
    account_id, moment, day, raw, doc = row
    assert account_id == account.pk
    assert moment.utcoffset().total_seconds() == 0
    assert day.isoformat() == moment.date().isoformat()
    assert raw == b"\x01\x02"
    assert doc == [1, "a"]


@pytest.mark.django_db(transaction=True)
def test_an_error_is_a_django_database_error_and_the_connection_stays_usable():
    with pytest.raises(ProgrammingError):
        run(("SELECT 1", None), ("SELECT no_such_column FROM outreach_account", {}))
    assert run_one("SELECT %(n)s::int", {"n": 5}) == [(5,)]
    assert connection.connection.info.transaction_status.name == "IDLE"


@pytest.mark.django_db(transaction=True)
def test_without_prepared_statements_the_same_statements_still_run():
    connection.close()
    options = connection.settings_dict.setdefault("OPTIONS", {})
    saved = options.get("prepare_threshold")
    options["prepare_threshold"] = None  # what DATABASE_PREPARED_STATEMENTS=false sets up
    try:
        assert run_one("SELECT %(n)s::int AS kit_unprepared_probe", {"n": 7}) == [(7,)]
        assert _prepared("kit_unprepared_probe") == []
    finally:
        connection.close()
        options["prepare_threshold"] = saved
