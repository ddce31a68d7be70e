"""Each memory's part in an account's data lifecycle (SPEC 16), without the lifecycle
importing any memory.

A memory registers a :class:`MemoryLifecycle` at ``ready()``, as it registers its MCP tools
and its health section: what it writes to an export and reads back from one, what of it an
account holds (an import goes into an empty account only), what it erases when a company
is forgotten, a member leaves or an account goes, and what it removes as retention passes.
``prospect_memory.lifecycle`` owns the file, the transactions, the erasure records and the
daily job, and asks each registered memory in turn, in the order they registered (the notes
first).

What the memories' parts share lives beside this contract: writing records
(:mod:`.exporting`), reading a record's fields (:mod:`.fields`), the import's ids, seats and
batches (:mod:`.importing`), and the rows an erasure or retention removes
(:mod:`.removing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from django.db.models import Model

    from outreach.access import Actor
    from outreach.models import Account, Member
    from prospect_memory.core.lifecycle.fields import Fields
    from prospect_memory.core.lifecycle.importing import ImportSession


@dataclass(frozen=True)
class ExportScope:
    """What one export reads: an account, whose member's own memory it includes (None:
    nobody's), and how many rows it fetches at a time."""

    account: Account
    member: Member | None
    batch_rows: int


class MemoryImporter(Protocol):
    """A memory's side of one import: it builds rows from its records, and checks what they
    say of each other once all are read."""

    #: A builder per record type: the row the record becomes (queued by the session).
    builders: dict[str, Callable[[Fields], Model]]
    #: Its models, in the order their rows are stored.
    models: tuple[type[Model], ...]

    def stored(self, model: type[Model], rows: list[Model]) -> None:
        """Rows of ``model`` were just stored."""

    def finish(self) -> None:
        """Every record is read and stored: refuse records that do not fit together, and
        complete what only the whole file tells."""


@dataclass(frozen=True)
class Rule:
    """A retention setting as the memory health page shows it."""

    name: str
    #: What the page calls what it removes.
    what: str
    days: int
    #: Whether 0 days keeps for ever (the lifecycle's settings); business memory's
    #: RETIRED_KEEP_DAYS of 0 purges at once.
    zero_keeps: bool = True

    @property
    def for_ever(self) -> bool:
        return self.days == 0 and self.zero_keeps


#: The retention rules whose days the lifecycle's own settings hold (``LIFECYCLE``), by the
#: names a memory reads them under in :attr:`RetentionScope.days`; a memory that owns a
#: setting of its own registers its rule (``MemoryLifecycle.retention_rules``).
AUDIT_EVENTS = "audit_events"
USAGE_EVENTS = "usage_events"
ARCHIVED_NOTES = "archived_notes"
CLOSED_ACCOUNTS = "closed_accounts"


@dataclass(frozen=True)
class RetentionScope:
    """One run of the retention job: its time, each rule's days by name (0: nothing to
    remove; the lifecycle's rules above and every memory's own), and the rows it deletes
    per statement."""

    now: datetime
    days: dict[str, int]
    batch_rows: int


def _nothing(*_args: object, **_kwargs: object) -> dict[str, int]:
    return {}


@dataclass(frozen=True)
class MemoryLifecycle:
    """One memory's part in the lifecycle."""

    name: str
    #: The record types it exports, in the order it writes them.
    record_types: tuple[str, ...]
    #: Its records of an export, each a dict with its ``type``, in that order.
    records: Callable[[ExportScope], Iterator[dict[str, Any]]]
    #: What ``account`` holds of it, named for a person ("notes"); empty: nothing.
    held: Callable[[Account], list[str]]
    #: Its side of an import into an empty account.
    importer: Callable[[ImportSession], MemoryImporter]
    #: What erasing a company (a resolved domain) would remove, and removing it (under the
    #: locks its own writes take), by kind. A memory that keeps nothing by company keeps
    #: the default.
    company_footprint: Callable[[Account, str], dict[str, int]] = _nothing
    erase_company: Callable[[Actor, str], dict[str, int]] = _nothing
    #: Before a member's seat goes: their own context erased, and what they wrote for the
    #: account attributed to no one by name (``names``: their username and email). Each
    #: memory in turn, in the order they registered, in the transaction that removes the
    #: seat; each takes its own locks first.
    member_leaving: Callable[[Member, set[str]], dict[str, int]] = _nothing
    #: Before an account's rows go: the locks its writers take, so a write under way
    #: finishes first.
    lock_account: Callable[[int], None] = lambda account_id: None
    #: The retention settings it owns beyond the lifecycle's, and one run's removals by
    #: rule name.
    retention_rules: Callable[[], list[Rule]] = list
    retain: Callable[[RetentionScope], dict[str, int]] = _nothing


_memories: list[MemoryLifecycle] = []


#: The file's own lines (its header and its manifest): no memory's records.
HEADER, MANIFEST = "kit-export", "manifest"


def register_lifecycle(memory: MemoryLifecycle) -> None:
    """Add ``memory`` to every export, import, erasure and retention run (once, however
    often ``ready()`` runs). A name and a record type are one memory's: another memory
    that takes one already taken, or the file's own, is refused, as the import could not
    tell whose a record is."""
    if memory in _memories:
        return
    if any(known.name == memory.name for known in _memories):
        raise ValueError(f"another memory is registered as {memory.name!r}")
    taken = (set(record_types()) | {HEADER, MANIFEST}) & set(memory.record_types)
    if taken:
        raise ValueError(
            f"memory {memory.name!r} declares record types already taken: "
            f"{', '.join(sorted(taken))}"
        )
    _memories.append(memory)


def lifecycles() -> list[MemoryLifecycle]:
    """The registered memories, in the order they registered."""
    return list(_memories)


def record_types() -> tuple[str, ...]:
    """Every record type an export holds, in the order it writes them."""
    return tuple(kind for memory in _memories for kind in memory.record_types)
