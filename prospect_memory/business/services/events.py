"""The events every write of an entry records (who did what, at which version)."""

from __future__ import annotations

from outreach.access import Actor
from prospect_memory.business.models import (
    Entry,
    EntryEvent,
)

#: Who an event names when Kit itself retired an entry.
KIT = "kit"


def record_event(by: Actor | str, action: str, entry: Entry, version: int | None = None) -> None:
    """Write :func:`event_on` ``entry``."""
    event_on(by, action, entry, version).save(force_insert=True)


def event_on(by: Actor | str, action: str, entry: Entry, version: int | None = None) -> EntryEvent:
    """An event on ``entry`` (at ``version``, its current one by default), by a person or an
    agent, or by Kit itself (:data:`KIT`, ``CONSOLIDATION``), not yet written."""
    return EntryEvent.build(
        by,
        account_id=entry.account_id,
        action=action,
        layer=entry.layer,
        key=entry.key,
        entry_id=entry.pk,
        version=version if version is not None else entry.version,
    )
