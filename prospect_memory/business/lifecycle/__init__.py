"""Business memory's part in an account's lifecycle (SPEC 16), registered at ``ready()``
(:mod:`prospect_memory.core.lifecycle`): its records in an export and read back from one, a
departing member's own context, the layers' locks before an account goes, and the
retention of entry events and evictions.

Its parts: ``export`` (its records), ``imports`` (its side of an import, and what an
account holds of it), ``erasure`` (a departing member's own context, the layers' locks
before an account goes) and ``retention`` (entry events, evictions).
"""

from __future__ import annotations

from prospect_memory.business.lifecycle.erasure import lock_account, member_leaving
from prospect_memory.business.lifecycle.export import records
from prospect_memory.business.lifecycle.imports import BusinessImporter, held
from prospect_memory.business.lifecycle.retention import retain, retention_rules
from prospect_memory.core.lifecycle import MemoryLifecycle

LIFECYCLE = MemoryLifecycle(
    name="business",
    record_types=("entry", "entry_version"),
    records=records,
    held=held,
    importer=BusinessImporter,
    member_leaving=member_leaving,
    lock_account=lock_account,
    retention_rules=retention_rules,
    retain=retain,
)
