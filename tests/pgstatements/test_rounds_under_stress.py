"""The statement toolkit (``pgstatements``) under real concurrency and failures, with the
machine's cores kept busy beside it: every call gives its rows or a Django database error,
the connection works after it (or was cleanly discarded), and a call that failed wrote
nothing.

A pipeline's results come back in however many reads the machine's timing makes of them;
the failure this guards against (psycopg pairing a commit's error with the wrong request
when a pipeline's statements commit implicitly at its end) showed only when they all came
in one read, which a busy machine makes likely.
"""

import random
import subprocess
import sys
import threading

import psycopg
import pytest
from django.db import IntegrityError, OperationalError, connection

import pgstatements as sql
from tests.pgstatements.conftest import PROBE

pytestmark = pytest.mark.django_db(transaction=True)


_BURN = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"


@pytest.fixture
def busy_cores():
    """Two processes that keep both cores busy for the test's length (each stops by itself
    after two minutes, should the test be killed before it can stop them)."""
    burners = [subprocess.Popen([sys.executable, "-c", _BURN]) for _ in range(2)]
    yield
    for burner in burners:
        burner.kill()
        burner.wait()


def _insert(row_id: int, tag: str, ref: int | None = None):
    return (f"INSERT INTO {PROBE} (id, tag, ref) VALUES (%s, %s, %s)", [row_id, tag, ref])  # noqa: S608


def _tags() -> set[str]:
    return {tag for (tag,) in sql.run_one(f"SELECT tag FROM {PROBE}", None)}  # noqa: S608


class _Caller:
    """One thread's calls: each kind of round trip, with what it must give."""

    def __init__(self, number: int):
        self.number = number
        self.next_id = number * 1_000_000
        self.kept: set[str] = set()  # tags of the calls that committed
        self.in_doubt: list[set[str]] = []  # of writes whose connection was lost meanwhile
        self.writing: set[str] = set()
        self.problems: list[str] = []
        self.lost = 0
        self.backend: int | None = None

    def ids(self, count: int) -> list[int]:
        first = self.next_id
        self.next_id += count
        return list(range(first, first + count))

    def tag(self, kind: str, row_id: int) -> str:
        return f"{self.number}:{kind}:{row_id}"

    def reads(self):
        rows = sql.run(("SELECT %s::int", [self.number]), ("SELECT %s::text", ["two"]))
        assert rows == [[(self.number,)], [("two",)]], rows

    def writes(self):
        a, b = self.ids(2)
        self.writing = {self.tag("writes", a), self.tag("writes", b)}
        sql.run(_insert(a, self.tag("writes", a)), _insert(b, self.tag("writes", b), a))
        self.kept |= self.writing

    def checked_at_commit(self):
        # Without a transaction of its own, the statements commit after the last one: a
        # foreign key checked then refuses the lot.
        a, b = self.ids(2)
        with pytest.raises(IntegrityError):
            sql.run(_insert(a, self.tag("x", a)), _insert(b, self.tag("x", b), -1))

    def unique_conflict(self):
        (a,) = self.ids(1)
        with pytest.raises(IntegrityError):
            sql.run(_insert(a, self.tag("x", a)), _insert(a, self.tag("x", a)))

    def transaction_checked_at_commit(self):
        a, b = self.ids(2)
        with pytest.raises(IntegrityError):
            sql.run_transaction(_insert(a, self.tag("x", a)), _insert(b, self.tag("x", b), -1))

    def transaction(self):
        (a,) = self.ids(1)
        self.writing = {self.tag("tx", a)}
        rows, undone = sql.run_transaction(_insert(a, self.tag("tx", a)), ("SELECT 7", None))
        assert rows == [None, [(7,)]]
        assert undone is None
        self.kept |= self.writing

    def timed_out(self):
        (a,) = self.ids(1)
        with pytest.raises(OperationalError) as failed:
            sql.run_transaction(
                ("SELECT set_config('statement_timeout', '20ms', true)", None),
                _insert(a, self.tag("x", a)),
                ("SELECT pg_sleep(1)", None),
            )
        if "statement timeout" not in str(failed.value):
            raise failed.value  # the killer's

    def work_raises(self):
        (a,) = self.ids(1)

        def work():
            raise ValueError("work done meanwhile failed")

        with pytest.raises(ValueError, match="meanwhile"), sql.Meanwhile(work):
            sql.run(("SELECT %s::int", [a]), ("SELECT 2", None))

    def work_meanwhile(self):
        with sql.Meanwhile(lambda: self.number) as meanwhile:
            rows = sql.run(("SELECT %s::int", [self.number]))
        assert meanwhile.result == self.number
        assert rows == [[(self.number,)]]

    def call(self, kind: str, killed: set[int]) -> None:
        self.writing = set()
        try:
            for step in (getattr(self, kind), self.connection_works):
                try:
                    step()
                except OperationalError as error:
                    if "statement timeout" in str(error) or self.backend not in killed:
                        raise
                    # The killer ended this connection: the call fails with Django's
                    # error, what it wrote is all there or all gone, and the next
                    # statement opens a new connection.
                    killed.discard(self.backend)
                    self.lost += 1
                    if self.writing:
                        self.in_doubt.append(self.writing)
                        self.writing = set()
                    self.connection_works()
        except BaseException as problem:  # collected: a failure in a thread is the test's
            self.problems.append(f"{kind}: {type(problem).__name__}: {problem}")

    def connection_works(self):
        self.backend = sql.run_one("SELECT pg_backend_pid()", None)[0][0]


_KINDS = [
    "reads", "writes", "checked_at_commit", "unique_conflict", "transaction_checked_at_commit",
    "transaction", "timed_out", "work_raises", "work_meanwhile",
]  # fmt: skip


def test_pipelined_calls_under_load_give_their_rows_or_a_clean_failure(probe_table, busy_cores):
    callers = [_Caller(number) for number in range(1, 5)]
    calls_each = 150
    done, killed = threading.Event(), set()

    def run(caller: _Caller):
        chooser = random.Random(caller.number)
        try:
            for _ in range(calls_each):
                caller.call(chooser.choice(_KINDS), killed)
        finally:
            connection.close()

    def kill():
        """End one caller's connection now and then, as a failover or an operator does."""
        chooser = random.Random(0)
        with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
            while not done.wait(chooser.uniform(0.05, 0.3)):
                backends = [c.backend for c in callers if c.backend is not None]
                if backends:
                    backend = chooser.choice(backends)
                    killed.add(backend)
                    other.execute("SELECT pg_terminate_backend(%s)", [backend])

    threads = [threading.Thread(target=run, args=(caller,)) for caller in callers]
    killer = threading.Thread(target=kill)
    for thread in [*threads, killer]:
        thread.start()
    for thread in threads:
        thread.join(240)
    done.set()
    killer.join(10)
    problems = [problem for caller in callers for problem in caller.problems]
    kinds = sorted({problem[:90] for problem in problems})
    assert problems == [], f"{len(problems)} of {calls_each * len(callers)} calls: {kinds}"
    assert sum(caller.lost for caller in callers) > 0  # the killer did reach some calls
    # Every call that committed stands, whole; no call that failed left a row; a write
    # whose connection was lost is there whole or not at all.
    tags = _tags()
    kept = set().union(*(caller.kept for caller in callers))
    in_doubt = [rows for caller in callers for rows in caller.in_doubt]
    assert kept <= tags
    assert all(rows <= tags or not rows & tags for rows in in_doubt)
    assert tags - kept <= set().union(*in_doubt)
