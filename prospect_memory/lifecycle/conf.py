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
    # Rows read from the database at a time while exporting (bounds the memory an export
    # of any size takes).
    "EXPORT_BATCH_ROWS": 500,
}

lifecycle_settings = AppSettings("LIFECYCLE", DEFAULTS)
