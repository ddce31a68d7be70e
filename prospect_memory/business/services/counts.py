"""A layer's counts (kept on its ``Shelf`` row by the database) and the rule that a new
entry fits under its capacity, in Python and in SQL."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Counts:
    """A layer's live entries (unexpired) and the entries that left it (:data:`RETIRED`)."""

    live: int
    left: int

    def leave_room(self, limit: int) -> bool:
        """Room for one more live entry, and no more left entries than are kept."""
        return self.live < limit and self.left <= limit


#: :meth:`Counts.leave_room` of a layer's shelf ``s`` in SQL, its counts taken as
#: :func:`lock_key` takes them (every live entry with an expiry as already gone; never
#: counted: no room), the limit given twice.
SHELF_LEAVES_ROOM = "s.live_entries < %s AND s.left_entries + s.expiring_entries <= %s"
