"""What every memory's erasures and retention share: the name a departed member's writing
keeps, Django admin's log entries about removed rows, deleting in short batches, and the
counts of what went, added up."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models

#: What rows written by a member who left are attributed to.
FORMER_MEMBER = "a former member"


def content_types(model: type[models.Model]) -> list[ContentType]:
    """The content types the admin logs rows of ``model`` under: its own and its proxies'."""
    kinds = [m for m in apps.get_models() if m._meta.concrete_model is model]
    return list(ContentType.objects.get_for_models(*kinds, for_concrete_models=False).values())


def forget_admin_log(model: type[models.Model], ids: Iterable[object]) -> int:
    """Django admin's log entries about these rows (their ids and names are text there)."""
    ids = [str(pk) for pk in ids]
    if not ids:
        return 0
    deleted, _ = LogEntry.objects.filter(
        content_type__in=content_types(model), object_id__in=ids
    ).delete()
    return deleted


def summed(*parts: dict[str, int]) -> dict[str, int]:
    """Counts by kind, added up: two memories may both remove rows of one kind (admin log
    entries, events)."""
    total: dict[str, int] = {}
    for part in parts:
        for kind, count in part.items():
            total[kind] = total.get(kind, 0) + count
    return total


def delete_in_batches(rows: models.QuerySet[Any], batch_rows: int) -> int:
    """Delete ``rows`` ``batch_rows`` at a time, each batch its own short statement."""
    model = rows.model
    deleted = 0
    while True:
        ids = list(rows.order_by().values_list("pk", flat=True)[:batch_rows])
        if not ids:
            return deleted
        batch = model._base_manager.filter(pk__in=ids)
        deleted += batch._raw_delete(batch.db)
