"""Ids as callers send them: anything that is not a UUID names nothing."""

from __future__ import annotations

import uuid


def uuid_or_none(value: object) -> uuid.UUID | None:
    """``value`` as a UUID, or ``None`` when it cannot be one (never an error)."""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except (ValueError, AttributeError, TypeError):
        return None
