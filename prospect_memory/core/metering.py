"""Usage metering: which memory an agent used, with which operation, through which client.

The memory-health page reads these rows. A row is a statistic, not a record anyone relies
on, so a read is metered without waiting for the WAL flush (``synchronous_commit`` off for
that one statement's transaction): the read does not pay a disk sync, and a crash can lose
at most the last few counts. Inside a caller's transaction the setting would last to its
end, so there the row waits for the disk with the rest. A write builds its row with
``UsageEvent.build`` and sends it with its own rows, in its transaction.
"""

from __future__ import annotations

from functools import cache

from django.db import connection

from outreach.access import Actor
from pgstatements import run
from prospect_memory.core.models import UsageEvent

_COLUMNS = (
    "account",
    "memory",
    "kind",
    "subject",
    "oauth_application",
    "from_memory",
    "near_duplicate",
    "shared_source",
)


@cache
def _unflushed_insert() -> str:
    # One prepared statement: set_config(..., true) turns synchronous commit off for this
    # statement's own transaction and no further (never used inside an atomic block).
    meta = UsageEvent._meta
    columns = ", ".join(meta.get_field(name).column for name in (*_COLUMNS, "created_at"))
    return (
        f"INSERT INTO {meta.db_table} ({columns}) "  # noqa: S608  (names from the model)
        "SELECT %(account)s::bigint, %(memory)s::text, %(kind)s::text, %(subject)s::text, "
        "%(oauth_application)s::bigint, %(from_memory)s::boolean, "
        "%(near_duplicate)s::boolean, %(shared_source)s::boolean, now() "
        "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS unflushed"
    )


def usage_record(
    *,
    actor: Actor,
    memory: str,
    kind: str,
    subject: str = "",
    from_memory: bool = False,
    near_duplicate: bool = False,
    shared_source: bool = False,
) -> None:
    """Count one use of ``memory`` by ``kind`` of operation about ``subject`` (a domain, a
    key) by a read, for ``actor``'s account. The three flags are prospect memory's save and
    recall outcomes. Committed without waiting for the disk, unless inside a transaction.
    """
    values = {
        "memory": memory,
        "kind": kind,
        "subject": subject,
        "from_memory": from_memory,
        "near_duplicate": near_duplicate,
        "shared_source": shared_source,
    }
    if connection.in_atomic_block:
        UsageEvent.record(actor, **values)
        return
    # The same attribution as ``record`` writes, as ids for the statement.
    who = {"account": actor.account, **UsageEvent.attribution(actor)}
    ids = {column: getattr(row, "pk", None) for column, row in who.items()}
    run((_unflushed_insert(), {**values, **ids}))
