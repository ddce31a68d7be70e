"""Each memory's part in an account's data lifecycle (SPEC 16), without the lifecycle
importing any memory.

A memory registers a :class:`MemoryLifecycle` at ``ready()``, as it registers its MCP tools
and its health section: the record types it writes to an export, in order, how it reads
them for an account, and what of it an account holds (an import goes into an empty
account only). ``prospect_memory.lifecycle`` writes the file, its header and manifest, and
asks each registered memory in turn, in the order they registered (the notes first).

The helpers below are what every memory's records share: rows read a batch at a time,
moments and ids as text, a sealed field opened, and an item's integrity flags.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

from django.db.models import Model, QuerySet

from prospect_memory.core.crypto import unseal

if TYPE_CHECKING:
    from outreach.models import Account, Member


@dataclass(frozen=True)
class ExportScope:
    """What one export reads: an account, whose member's own memory it includes (None:
    nobody's), and how many rows it fetches at a time."""

    account: Account
    member: Member | None
    batch_rows: int


@dataclass(frozen=True)
class MemoryLifecycle:
    """One memory's part in the lifecycle."""

    name: str
    #: The record types it exports, in the order it writes them.
    record_types: tuple[str, ...]
    #: Its records of an export, each a dict with its ``type``, in that order.
    records: Callable[[ExportScope], Iterator[dict]]
    #: What ``account`` holds of it, named for a person ("notes"); empty: nothing.
    held: Callable[[Account], list[str]]


_memories: list[MemoryLifecycle] = []


def register_lifecycle(memory: MemoryLifecycle) -> None:
    """Add ``memory`` to every export, import and erasure (once, whatever ``ready()`` does)."""
    if all(known.name != memory.name for known in _memories):
        _memories.append(memory)


def lifecycles() -> list[MemoryLifecycle]:
    """The registered memories, in the order they registered."""
    return list(_memories)


def record_types() -> tuple[str, ...]:
    """Every record type an export holds, in the order it writes them."""
    return tuple(kind for memory in _memories for kind in memory.record_types)


# --- what every memory's records share ----------------------------------------------------

#: The columns of an item's integrity flags (``FlaggedModel``).
FLAG_COLUMNS = ("integrity_ciphertext", "flagged_at", "integrity_reviewed_at")


def pages(
    rows: QuerySet, columns: tuple[str, ...], order: tuple[str, ...], scope: ExportScope
) -> Iterator[dict]:
    """``rows`` as dicts of ``columns``, fetched ``scope.batch_rows`` at a time through one
    server-side cursor, in ``order`` (an index of the account's rows gives it)."""
    return rows.order_by(*order).values(*columns).iterator(chunk_size=scope.batch_rows)


def moment(value: datetime | date | None) -> str | None:
    return value.isoformat() if value is not None else None


def ref(value: object) -> str | None:
    """An id as the file names it (text), or None."""
    return str(value) if value is not None else None


def opened(model: type[Model], field: str, account_id: int, row: dict) -> str:
    """The plain text of the sealed ``field`` of a row read as a dict."""
    sealed = getattr(model, field)
    return unseal(
        row[sealed.column],
        table=sealed.binding_table(model),
        account_id=account_id,
        row_id=row["id"],
        field=field,
    )


def integrity(model: type[Model], account_id: int, row: dict) -> dict:
    """An item's flags and when they were raised and reviewed, as a record holds them."""
    text = opened(model, "integrity_json", account_id, row)
    return {
        "flags": json.loads(text) if text else [],
        "flagged_at": moment(row["flagged_at"]),
        "reviewed_at": moment(row["integrity_reviewed_at"]),
    }
