"""Hot-path statements: prepared once per connection, pipelined, errors like Django's."""

import pytest
from django.core.exceptions import ValidationError
from django.db import DatabaseError, ProgrammingError, connection, transaction

import pgstatements as sql
from pgstatements import run, run_one, with_generic_plan

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


def _plans(fragment: str) -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s",
            [f"%{fragment}%"],
        )
        return cursor.fetchone()


def test_a_statement_run_with_its_generic_plan_gives_the_setting_back():
    sql = "SELECT count(*) AS kit_generic_probe FROM outreach_account WHERE id = %(id)s"
    with connection.cursor() as cursor:
        cursor.execute("SET plan_cache_mode = force_custom_plan")
    try:
        with transaction.atomic():
            for n in range(3):
                _, (count,), after = run(*with_generic_plan((sql, {"id": n})))
                assert count == (0,)
                assert after == [("force_custom_plan",)]
            assert _plans("kit_generic_probe") == (3, 0)
            run_one(sql, {"id": 1})  # after it, the caller's setting again
            assert _plans("kit_generic_probe") == (3, 1)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET plan_cache_mode")


@pytest.mark.django_db(transaction=True)
def test_a_generic_plan_is_only_asked_for_inside_a_transaction():
    with pytest.raises(RuntimeError, match="transaction"):
        with_generic_plan(("SELECT 1", ()))


def test_a_model_row_written_by_statement_reads_back_as_save_writes_it(account):
    from prospect_memory.core.models import UsageEvent

    event = UsageEvent(account=account, memory="business", kind="store", subject="icp")
    run(sql.insert(event))
    stored = UsageEvent.objects.get(account=account)
    assert (stored.memory, stored.kind, stored.subject) == ("business", "store", "icp")
    assert stored.created_at == event.created_at
    stored.subject = "voice"
    run(sql.update(stored, ["subject"]))
    assert UsageEvent.objects.get(pk=stored.pk).subject == "voice"


@pytest.mark.django_db(transaction=True)
def test_a_vector_goes_in_binary_on_every_new_connection_and_stores_what_its_text_would():
    import random

    from pgvector import Vector
    from psycopg import pq
    from psycopg.adapt import PyFormat

    values = [random.Random(n).uniform(-1, 1) for n in range(384)]
    as_text = "[" + ",".join(map(str, values)) + "]"
    connection.close()
    connection.ensure_connection()  # a new connection: adapted when created
    dumper = connection.connection.adapters.get_dumper(Vector, PyFormat.AUTO)
    assert dumper.format == pq.Format.BINARY
    for prepare in (True, False):
        ((same, distance),) = run(
            (
                "SELECT %(b)s::vector::text = %(t)s::vector::text, %(b)s::vector <=> %(t)s",
                {"b": sql.vector_param(values), "t": as_text},
            ),
            prepare=prepare,
        )[0]
        assert same
        assert distance == 0
    assert sql.vector_param(None) is None


def test_an_optional_statement_that_fails_is_undone_alone(account):
    from prospect_memory.core.models import UsageEvent

    def usage(subject):
        return sql.insert(
            UsageEvent(account=account, memory="business", kind="store", subject=subject)
        )

    with transaction.atomic():
        undone = sql.run_with_optional(
            usage("kept"), optional=[usage("also"), ("SELECT 1/0", None)]
        )
        assert isinstance(undone, DatabaseError)
        assert "division by zero" in str(undone)
        # The same prepared statements serve the next round trip (psycopg deallocates
        # them after a rollback to a savepoint: in a pipeline, it could do so too late).
        assert sql.run_with_optional(usage("then"), optional=[usage("with")]) is None
    subjects = set(UsageEvent.objects.values_list("subject", flat=True))
    assert subjects == {"kept", "then", "with"}  # "also" went with the failed optional part


def test_a_failure_before_the_optional_statements_is_the_callers():
    with pytest.raises(DatabaseError, match="division by zero"), transaction.atomic():
        sql.run_with_optional(("SELECT 1/0", None), optional=[("SELECT 1", None)])


@pytest.mark.django_db(transaction=True)
def test_optional_statements_are_only_run_inside_a_transaction():
    with pytest.raises(RuntimeError, match="transaction"):
        sql.run_with_optional(("SELECT 1", None), optional=[("SELECT 1", None)])


def _usage(account, subject):
    from prospect_memory.core.models import UsageEvent

    return sql.insert(UsageEvent(account=account, memory="business", kind="store", subject=subject))


def _subjects():
    from prospect_memory.core.models import UsageEvent

    return set(UsageEvent.objects.values_list("subject", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_transaction_of_its_own_commits_in_one_round_trip(account):
    rows, undone = sql.run_transaction(_usage(account, "a"), ("SELECT %s::int", [7]))
    assert (rows, undone) == ([None, [(7,)]], None)
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _subjects() == {"a"}


@pytest.mark.django_db(transaction=True)
def test_a_failure_in_a_transaction_of_its_own_undoes_it_all(account):
    with pytest.raises(DatabaseError, match="division by zero"):
        sql.run_transaction(_usage(account, "a"), ("SELECT 1/%s::int", [0]))
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _subjects() == set()
    assert run_one("SELECT %s::int", [1]) == [(1,)]  # the connection serves the next request


@pytest.mark.django_db(transaction=True)
def test_an_optional_failure_in_a_transaction_of_its_own_is_undone_alone(account):
    _, undone = sql.run_transaction(
        _usage(account, "kept"), optional=[_usage(account, "also"), ("SELECT 1/%s::int", [0])]
    )
    assert "division by zero" in str(undone)
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _subjects() == {"kept"}


def test_inside_a_callers_transaction_it_is_a_savepoint_of_it(account):
    with transaction.atomic():
        sql.run_transaction(_usage(account, "with the caller"))
        with pytest.raises(DatabaseError):
            sql.run_transaction(_usage(account, "undone"), ("SELECT 1/%s::int", [0]))
        sql.run_transaction(_usage(account, "after"))  # the caller's transaction goes on
    assert _subjects() == {"with the caller", "after"}


def test_native_statements_number_their_placeholders():
    statement = sql.native("SELECT %s::int + %s::int AS kit_native_probe")
    assert statement == "SELECT $1::int + $2::int AS kit_native_probe"
    assert run((statement, [40, 2]))[0] == [(42,)]
    with pytest.raises(ValueError, match="%s placeholders"):
        sql.native("SELECT '100%' || %s")


def _usage_of_a_gone_client(account):
    from prospect_memory.core.models import UsageEvent

    row = UsageEvent(account=account, oauth_application_id=2**31 - 1, memory="business")
    row.kind, row.subject = "store", "orphan"
    return sql.insert(row)  # its foreign key is checked at the commit


@pytest.mark.django_db(transaction=True)
def test_a_check_at_the_commit_of_a_transaction_of_its_own_is_raised_as_it_is(account):
    from django.db import IntegrityError

    with pytest.raises(IntegrityError, match="foreign key"):
        sql.run_transaction(_usage(account, "a"), _usage_of_a_gone_client(account))
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _subjects() == set()
    assert run_one("SELECT %s::int", [1]) == [(1,)]


def test_whole_numbers_go_as_their_columns_size_whatever_their_value():
    from prospect_memory.business.models import Entry

    version = Entry._meta.get_field("version")
    assert {type(sql.prepared(version, n)).__name__ for n in (1, 40_000, 2**31 - 1)} == {"Int4"}
    assert sql.prepared(Entry._meta.get_field("key"), "icp") == "icp"


def test_every_value_goes_as_djangos_own_preparation_would_send_it():
    """The shortcuts of ``prepared`` (values sent as they are, integers sized once per
    field) give what ``get_db_prep_save`` gives, for every field of the hot-path models."""
    from datetime import UTC, datetime

    from prospect_memory.business.models import Entry, EntryEvent, EntryVersion
    from prospect_memory.core.models import UsageEvent

    samples = [0, 7, 2**31 - 1, "", "icp", True, False, datetime(2026, 12, 2, 12, tzinfo=UTC)]
    samples.append(None)
    for model in (Entry, EntryEvent, EntryVersion, UsageEvent):
        for field in model._meta.concrete_fields:
            for value in samples:
                try:
                    expected = field.get_db_prep_save(value, connection)
                except (TypeError, ValueError, AttributeError, ValidationError):
                    continue  # not a value of this field
                got = sql.prepared(field, value)
                assert type(got) is type(expected), (model.__name__, field.name, value)
                assert got == expected or repr(got) == repr(expected), (field.name, value)


def test_a_naive_time_still_gets_djangos_warning():
    from datetime import datetime

    from prospect_memory.business.models import Entry

    with pytest.warns(RuntimeWarning, match="naive datetime"):
        sql.prepared(Entry._meta.get_field("created_at"), datetime(2026, 12, 2, 12))


def test_transaction_control_and_statements_with_rows_in_one_round_trip():
    """BEGIN and COMMIT share a cursor; a statement without parameters that returns rows
    keeps its own."""
    rows = run(("BEGIN", None), ("SELECT 1", None), ("SELECT %s::int", [2]), ("COMMIT", None))
    assert rows == [None, [(1,)], [(2,)], None]


def test_a_time_whose_zone_gives_no_offset_is_naive_to_django_and_here():
    from datetime import datetime, tzinfo

    from prospect_memory.business.models import Entry

    class NoOffset(tzinfo):
        def utcoffset(self, dt):
            return None

    with pytest.warns(RuntimeWarning, match="naive datetime"):
        sent = sql.prepared(
            Entry._meta.get_field("created_at"), datetime(2026, 12, 2, tzinfo=NoOffset())
        )
    assert sent.utcoffset() is not None


def test_work_done_meanwhile_overlaps_the_round_trip():
    """The statement is on its way before the work starts: PostgreSQL starts running it
    while the client works, and its rows are read after."""
    import time
    from datetime import UTC, datetime

    def work():
        time.sleep(0.2)
        return datetime.now(UTC)

    with sql.Meanwhile(work) as meanwhile:
        ((started, n),) = run_one("SELECT statement_timestamp(), %s::int", [7])
    assert (meanwhile.done, n) == (True, 7)
    assert started < meanwhile.result  # begun before the work ended, not after it


def test_only_the_first_round_trip_of_the_block_carries_the_work():
    calls = []
    with sql.Meanwhile(lambda: calls.append(1)) as meanwhile:
        assert run_one("SELECT 1", None) == [(1,)]
        assert run(("SELECT 2", None), ("SELECT %s::int", [3])) == [[(2,)], [(3,)]]
    assert (meanwhile.done, calls) == (True, [1])
    with sql.Meanwhile(lambda: calls.append(2)) as unused:
        pass
    assert (unused.done, calls) == (False, [1])
    assert run_one("SELECT 4", None) == [(4,)]
    assert calls == [1]  # outside a block: no work


def test_work_that_raises_is_raised_once_the_rows_are_read_and_the_connection_works():
    def work():
        raise LookupError("the work's own failure")

    with pytest.raises(LookupError), sql.Meanwhile(work):
        run_one("SELECT 1", None)
    assert connection.connection.pgconn.pipeline_status == 0  # off
    with transaction.atomic():
        with pytest.raises(LookupError), sql.Meanwhile(work):
            run_one("SELECT 1", None)
        assert run_one("SELECT 2", None) == [(2,)]  # the caller's transaction goes on
    assert run_one("SELECT 3", None) == [(3,)]


def test_a_statement_that_fails_while_work_is_done_is_a_django_error_after_it():
    meanwhile = sql.Meanwhile(lambda: "done")
    with pytest.raises(DatabaseError), transaction.atomic(), meanwhile:
        run_one("SELECT 1 / %s::int", [0])
    assert (meanwhile.done, meanwhile.result) == (True, "done")
    assert run_one("SELECT 1", None) == [(1,)]


def test_a_new_row_is_the_keyword_constructors_row(account, member):
    """``new_row`` makes what ``Model(**values)`` makes: the values given (by attribute
    name, or a related row by its field's name, kept with it), every other field's default,
    a fresh default id each time; a field the model does not have is refused."""
    from prospect_memory.business.models import Entry, EntryEvent

    values = {"account_id": account.pk, "layer": "account", "key": "icp", "confidence": 70}
    made, expected = sql.new_row(Entry, **values), Entry(**values)
    fresh = [f.attname for f in Entry._meta.concrete_fields if callable(f.default)]  # id, times
    fields = [f.attname for f in Entry._meta.concrete_fields if f.attname not in fresh]
    assert [getattr(made, name) for name in fields] == [getattr(expected, name) for name in fields]
    for name in fresh:
        assert type(getattr(made, name)) is type(getattr(expected, name))
    assert made.id != sql.new_row(Entry, **values).id
    assert made._state.adding
    assert made._state.db is None
    event = sql.new_row(EntryEvent, account_id=account.pk, member=member, action="store", key="k")
    assert event.member_id == member.pk
    assert event.member is member  # kept with it: no query to read it
    with pytest.raises(TypeError, match="has no field colour"):
        sql.new_row(EntryEvent, account_id=account.pk, colour="red")


@pytest.mark.parametrize("conforming", ["on", "off"])
def test_a_literal_reads_back_as_written_whatever_the_database_does_with_backslashes(conforming):
    """A value written into a statement (``literal``) is that value and nothing more, with
    ``standard_conforming_strings`` on (the default) or off (a database or role may set it):
    a backslash can neither end the string nor escape anything after it."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    nasty = [
        "",
        "'",
        "\\",
        "\\'",
        "\\') ) ) OR true --",
        "%",
        "%s",
        "%(account)s",
        "%%",
        "multilingual-e5-small-q4",
        "e\u0301t\u00e9 \U0001f600",
    ]
    with connection.cursor() as cursor:
        cursor.execute(f"SET standard_conforming_strings = {conforming}")
    try:

        def reads_back(text: str) -> None:
            # With a parameter, as the statements that carry literals are sent.
            statement = f"SELECT {sql.literal(text)}::text, %(n)s::int"
            assert run_one(statement, {"n": 7}) == [(text, 7)], text

        for text in nasty:
            reads_back(text)
        given(
            st.text(alphabet=st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))
        )(settings(max_examples=200, deadline=None)(reads_back))()
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET standard_conforming_strings")
