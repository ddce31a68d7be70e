"""Django model rows and hand-written statements on PostgreSQL, prepared once per
connection and sent together in one round trip: plumbing with no product in it, used by the
CRM (``outreach``) and the memories (``prospect_memory``) alike.

Callers import the names from the package (``import pgstatements as sql``;
``sql.run_transaction(...)``, ``sql.insert(entry)``); the two modules are how it is built:

- :mod:`pgstatements.rounds`: statements sent, prepared and pipelined (``run``,
  ``run_transaction``, ``run_with_optional``, ``run_one``; ``literal`` for a value the
  planner must see), each sent where Django's
  routers send a read when it cannot write (``reads_elsewhere``), else to the default;
- :mod:`pgstatements.rows`: a model's rows as such statements (``insert``, ``update``,
  ``new_row``, ``lock_row``, ``take_slot``; ``lock_statement`` and ``slot_statement`` to
  send the last two with others) and pgvector's binary parameters.
"""

from pgstatements.rounds import (
    Meanwhile,
    Native,
    Params,
    literal,
    native,
    reads_elsewhere,
    run,
    run_one,
    run_transaction,
    run_with_optional,
    with_generic_plan,
)
from pgstatements.rows import (
    adapt_vectors,
    insert,
    inserted_fields,
    lock_row,
    lock_statement,
    locked_row,
    new_row,
    prepared,
    slot_statement,
    slot_taken,
    take_slot,
    update,
    vector_param,
)

__all__ = [
    "Meanwhile",
    "Native",
    "Params",
    "adapt_vectors",
    "insert",
    "inserted_fields",
    "literal",
    "lock_row",
    "lock_statement",
    "locked_row",
    "native",
    "new_row",
    "prepared",
    "reads_elsewhere",
    "run",
    "run_one",
    "run_transaction",
    "run_with_optional",
    "slot_statement",
    "slot_taken",
    "take_slot",
    "update",
    "vector_param",
    "with_generic_plan",
]
