"""An entry's kept versions: the snapshot a change keeps, and the newest HISTORY_VERSIONS
kept of them."""

from __future__ import annotations

from functools import cache

import pgstatements as sql
from pgstatements import new_row, run
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Entry,
    EntryVersion,
)


def keep_version(entry: Entry) -> None:
    """Snapshot the entry as it is before a change, and keep the newest versions only."""
    run(*history_statements(version_of(entry)))


def version_of(entry: Entry) -> EntryVersion:
    """The entry as it is before a change, as its history keeps it (not yet written)."""
    version = new_row(
        EntryVersion,
        account_id=entry.account_id,
        entry_id=entry.pk,
        version=entry.version,
        category=entry.category,
        confidence=entry.confidence,
        source_pipeline_id=entry.source_pipeline_id,
        source_execution_id=entry.source_execution_id,
        source_step_id=entry.source_step_id,
        source_extracted_at=entry.source_extracted_at,
        strategy=entry.strategy,
        written_by_id=entry.written_by_id,
        written_by_label=entry.written_by_label,
        oauth_application_id=entry.oauth_application_id,
        written_at=entry.updated_at,
    )
    version.value_json = entry.value_json
    if entry.flagged_at is not None:
        version.integrity_json, version.flagged_at = entry.integrity_json, entry.flagged_at
    version.integrity_reviewed_at = entry.integrity_reviewed_at
    return version


def history_statements(version: EntryVersion) -> list[tuple[str, list[object]]]:
    """Write ``version`` and keep the newest HISTORY_VERSIONS of its entry: to send with a
    write's other statements in one round trip."""
    return [sql.insert(version), beyond_history(version)]


def beyond_history(version: EntryVersion, *, a_step: bool = False) -> tuple[str, list[object]]:
    """Delete the versions of ``version``'s entry past the newest HISTORY_VERSIONS, once it
    is written. ``a_step``: as a step of the statement that writes it (``store_round_trip``), which
    does not see it among the others: one fewer of them kept, and only if the write wrote."""
    keep = business_settings.HISTORY_VERSIONS - (1 if a_step else 0)
    return _beyond_history(a_step), [version.account_id, version.entry_id, keep]


@cache
def _beyond_history(a_step: bool) -> str:
    table = EntryVersion._meta.db_table
    return f"""
    DELETE FROM {table} WHERE id IN (
        SELECT id FROM {table} WHERE account_id = %s AND entry_id = %s
         ORDER BY version DESC OFFSET %s){" AND EXISTS (SELECT FROM written)" if a_step else ""}"""  # noqa: S608
