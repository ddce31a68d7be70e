"""Prospect notes' part in an account's lifecycle (SPEC 16), registered at ``ready()``
(:mod:`prospect_memory.core.lifecycle`): their records in an export and read back from one,
a company's erasure, a departing member's attributions, and the retention of audit events
and archived notes.

Its parts: ``export`` (its records), ``imports`` (its side of an import, and what an
account holds of it), ``erasure`` (a company's notes, a departing member's attributions)
and ``retention`` (audit events, archived notes).
"""

from __future__ import annotations

from prospect_memory.core.lifecycle import MemoryLifecycle
from prospect_memory.notes.lifecycle.erasure import company_footprint, erase_company, member_leaving
from prospect_memory.notes.lifecycle.export import records
from prospect_memory.notes.lifecycle.imports import NotesImporter, held
from prospect_memory.notes.lifecycle.retention import retain

LIFECYCLE = MemoryLifecycle(
    name="notes",
    record_types=("dossier", "note", "compaction"),
    records=records,
    held=held,
    importer=NotesImporter,
    company_footprint=company_footprint,
    erase_company=erase_company,
    member_leaving=member_leaving,
    retain=retain,
)
