"""What every memory's records in an export share: rows read a batch at a time, moments
and ids as text, a sealed field opened, and an item's integrity flags."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from django.db.models import Model, QuerySet

from prospect_memory.core.crypto import unseal

#: The columns of an item's integrity flags (``FlaggedModel``).
FLAG_COLUMNS = ("integrity_ciphertext", "flagged_at", "integrity_reviewed_at")


def pages(
    rows: QuerySet[Any], columns: tuple[str, ...], order: tuple[str, ...], batch_rows: int
) -> Iterator[dict[str, Any]]:
    """``rows`` as dicts of ``columns``, fetched ``batch_rows`` at a time through one
    server-side cursor, in ``order`` (an index of the account's rows gives it)."""
    return rows.order_by(*order).values(*columns).iterator(chunk_size=batch_rows)


def moment(value: datetime | date | None) -> str | None:
    return value.isoformat() if value is not None else None


def ref(value: object) -> str | None:
    """An id as the file names it (text), or None."""
    return str(value) if value is not None else None


def opened(model: type[Model], field: str, account_id: int, row: dict[str, Any]) -> str:
    """The plain text of the sealed ``field`` of a row read as a dict."""
    sealed = getattr(model, field)
    return unseal(
        row[sealed.column],
        table=sealed.binding_table(model),
        account_id=account_id,
        row_id=row["id"],
        field=field,
    )


def flags_of(model: type[Model], account_id: int, row: dict[str, Any]) -> dict[str, Any]:
    """An item's flags and when they were raised and reviewed, as a record holds them."""
    text = opened(model, "integrity_json", account_id, row)
    return {
        "flags": json.loads(text) if text else [],
        "flagged_at": moment(row["flagged_at"]),
        "reviewed_at": moment(row["integrity_reviewed_at"]),
    }
