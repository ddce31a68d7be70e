"""Knowledge search's result types (at the bottom of the package: no import circle)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prospect_memory.business.records import EntryView
from prospect_memory.notes.records import NoteView, StopReason


@dataclass(frozen=True)
class About:
    """The company a note is about, and whether it must not be contacted."""

    domain: str
    stop_reasons: list[StopReason]

    @property
    def should_stop(self) -> bool:
        return bool(self.stop_reasons)


@dataclass
class Hit:
    kind: str
    distance: float
    title: str
    excerpt: str
    stale: bool
    note: NoteView | None = None
    entry: EntryView | None = None
    about: About | None = None


@dataclass
class KnowledgeSearch:
    hits: list[Hit] = field(default_factory=list)
    #: Rows that could not be compared by meaning (no vector of the current model yet, or
    #: the provider unreachable): an empty answer is not proof that nothing is known.
    not_compared: int = 0
    #: Hits left out to keep the answer within PAYLOAD_MAX_BYTES (the farthest first).
    truncated: bool = False
    problem: str = ""
    #: The company the notes were narrowed to, as resolved from ``domain``; "" for all.
    domain: str = ""
