"""The data lifecycle's settings: one ``LIFECYCLE`` dict merged over ``DEFAULTS``; every
text that names one of these numbers is built from here."""

from __future__ import annotations

from typing import Any

from prospect_memory.core.conf import AppSettings

DEFAULTS: dict[str, Any] = {
    # Retention, in days, applied by the daily job (0 keeps for ever). Evicted and expired
    # entries are business memory's RETIRED_KEEP_DAYS (BUSINESS_MEMORY), applied by the
    # same job.
    "AUDIT_EVENTS_DAYS": 400,
    "USAGE_EVENTS_DAYS": 90,
    "ARCHIVED_NOTES_DAYS": 180,
    # How long a closed account's data is kept before the job erases it.
    "CLOSED_ACCOUNT_DAYS": 30,
    # Rows the retention job deletes per statement (each batch its own short transaction),
    # and how long it keeps the record of its own runs.
    "RETENTION_BATCH_ROWS": 5000,
    "RETENTION_RUNS_DAYS": 90,
    # An export whose reader stops reading for this long is ended (its snapshot would hold
    # back the database's clean-up).
    "EXPORT_IDLE_SECONDS": 300,
    # The longest line an import reads (a note or an entry with its versions' provenance is
    # far smaller): a longer one is refused before it is held in memory.
    "IMPORT_LINE_MAX_BYTES": 1024 * 1024,
    # Rows read from the database at a time while exporting (bounds the memory an export
    # of any size takes).
    "EXPORT_BATCH_ROWS": 500,
}

lifecycle_settings = AppSettings("LIFECYCLE", DEFAULTS)
