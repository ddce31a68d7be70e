"""Where Django looks for the ``prospect_memory`` app's models: the notes' (``notes.models``)
and those the memories share (``core.models``). Their tables keep the app's label."""

from prospect_memory.core.models import Erasure, RetentionRun, UsageEvent
from prospect_memory.notes.models import AuditEvent, Compaction, DailySaveCount, Dossier, Note

__all__ = [
    "AuditEvent",
    "Compaction",
    "DailySaveCount",
    "Dossier",
    "Erasure",
    "Note",
    "RetentionRun",
    "UsageEvent",
]
