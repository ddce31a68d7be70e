"""Business memory's records in an export: ``entry`` (the shared layer, and the exporting
member's own layer, in every status; nobody else's own layer ever) and ``entry_version``
(the versions kept of those entries). Values are decrypted; an entry names the entry it
was merged into (``alias_of``) and a version its entry (``entry``) by the exporting Kit's
ids."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from outreach.models import Member
from prospect_memory.business.models import (
    Entry,
    EntryVersion,
    Layer,
)
from prospect_memory.core.lifecycle import ExportScope
from prospect_memory.core.lifecycle.exporting import (
    FLAG_COLUMNS,
    flags_of,
    moment,
    opened,
    pages,
    ref,
)

SOURCE_COLUMNS = (
    "source_pipeline_id",
    "source_execution_id",
    "source_step_id",
    "source_extracted_at",
)


WRITER_COLUMNS = ("written_by__user__username", "written_by_label", "oauth_application__name")


ENTRY_COLUMNS = (
    "id",
    "layer",
    "key",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "version",
    "strategy",
    "status",
    "alias_of_id",
    "retired_at",
    "created_at",
    "updated_at",
    "written_at",
    "expires_at",
    "used_at",
    "last_accessed_at",
    "access_count",
    "idle_periods_charged",
    "kept_apart",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)


VERSION_COLUMNS = (
    "id",
    "entry_id",
    "version",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "strategy",
    "written_at",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)


def records(scope: ExportScope) -> Iterator[dict[str, Any]]:
    account, member = scope.account, scope.member
    owner = account.pk
    entries = Entry.objects.filter(_layers(member), account=account)
    order = ("layer", "member_id", "status", "key", "id")
    for row in pages(entries, ENTRY_COLUMNS, order, scope.batch_rows):
        yield _entry_record(row, owner)
    versions = EntryVersion.objects.filter(_layers(member, through="entry__"), account=account)
    for row in pages(versions, VERSION_COLUMNS, ("entry_id", "-version"), scope.batch_rows):
        yield _version_record(row, owner)


def _layers(member: Member | None, *, through: str = "") -> Q:
    """The shared layer, and ``member``'s own."""
    shared = Q(**{f"{through}layer": Layer.ACCOUNT})
    if member is None:
        return shared
    return shared | Q(**{f"{through}layer": Layer.MEMBER, f"{through}member": member})


def _source(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "pipeline_id": row["source_pipeline_id"],
        "execution_id": row["source_execution_id"],
        "step_id": row["source_step_id"],
        "extracted_at": moment(row["source_extracted_at"]),
    }


def _written(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "written_by": row["written_by__user__username"],
        "written_by_label": row["written_by_label"],
        "client": row["oauth_application__name"],
    }


def _entry_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "entry",
        "id": ref(row["id"]),
        "layer": row["layer"],
        "key": row["key"],
        "value": json.loads(opened(Entry, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "version": row["version"],
        "strategy": row["strategy"],
        "status": row["status"],
        "alias_of": ref(row["alias_of_id"]),
        "retired_at": moment(row["retired_at"]),
        "created_at": moment(row["created_at"]),
        "updated_at": moment(row["updated_at"]),
        "written_at": moment(row["written_at"]),
        "expires_at": moment(row["expires_at"]),
        "used_at": moment(row["used_at"]),
        "last_accessed_at": moment(row["last_accessed_at"]),
        "access_count": row["access_count"],
        "idle_periods_charged": row["idle_periods_charged"],
        "kept_apart": row["kept_apart"],
        **_written(row),
        "integrity": flags_of(Entry, account_id, row),
    }


def _version_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "entry_version",
        "id": ref(row["id"]),
        "entry": ref(row["entry_id"]),
        "version": row["version"],
        "value": json.loads(opened(EntryVersion, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "strategy": row["strategy"],
        "written_at": moment(row["written_at"]),
        **_written(row),
        "integrity": flags_of(EntryVersion, account_id, row),
    }
