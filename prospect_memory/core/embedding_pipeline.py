"""The embedding pipeline for any model with an embedding (``core.models.EmbeddedModel``).

A memory describes its rows once as an :class:`EmbeddingTarget` (the model, the text of a
row, the rows a backfill looks at, and the Celery task that embeds one row) and gets:

- :func:`enqueue`: embed a row in the background once the current transaction commits;
- :func:`embed_one`: what that task does, idempotent (a row already embedded for its text
  and model is skipped, a row changed or deleted meanwhile is left alone);
- :func:`embed_rows` and :func:`backfill`: rows in provider batches;
- :func:`mark_for_reembedding`: after the model changed.

A retryable provider failure propagates (the task retries with backoff); a permanent one
marks the row failed. This module sends tasks by name and never imports them, so tasks and
services can both use it without an import circle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery import current_app
from django.db import models, transaction

from outreach import after_answer
from prospect_memory.core.embeddings import (
    PermanentEmbeddingError,
    RetryableEmbeddingError,
    get_provider,
)
from prospect_memory.core.embeddings.budget import embed_within_budget
from prospect_memory.core.models import EmbeddedModel

logger = logging.getLogger(__name__)

# Gemini accepts at most 100 texts per batch request.
BATCH = 100

#: Options of every embedding task (``@shared_task(**EMBEDDING_TASK_OPTIONS)``): retried with
#: exponential backoff and jitter on a retryable provider failure, acknowledged late so a
#: killed worker's task runs again, with time limits.
EMBEDDING_TASK_OPTIONS = {
    "bind": True,
    "acks_late": True,
    "autoretry_for": (RetryableEmbeddingError,),
    "retry_backoff": 2,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 8,
    "soft_time_limit": 120,
    "time_limit": 150,
}

READY = EmbeddedModel.EmbeddingStatus.READY
PENDING = EmbeddedModel.EmbeddingStatus.PENDING
FAILED = EmbeddedModel.EmbeddingStatus.FAILED


@dataclass(frozen=True)
class EmbeddingTarget:
    model: type[EmbeddedModel]
    #: The embedding input of a row (already cut to the input limit).
    text: Callable[[EmbeddedModel], str]
    #: The rows a backfill considers, oldest first (e.g. active notes only).
    backlog: Callable[[], models.QuerySet[Any]]
    #: Dotted name of the Celery task that embeds one row, given its id as text.
    task: str
    #: A field that changes whenever the row's text does (None: the text never changes),
    #: so a vector computed from an older text is never stored over a newer one.
    revision: str | None = None
    #: The time a row's text was last written: how long a pending row has waited (the
    #: operator's figure of the oldest in the queue).
    written_at: str = "created_at"
    #: Of an account's rows, those its shared pages may count (a member's own business
    #: memory is seen, and counted, by that member alone).
    shared: Callable[[models.QuerySet[Any]], models.QuerySet[Any]] = lambda rows: rows

    def __post_init__(self) -> None:
        _targets[self.model._meta.label] = self

    @property
    def label(self) -> str:
        return str(self.model._meta.verbose_name)


_targets: dict[str, EmbeddingTarget] = {}


def targets() -> list[EmbeddingTarget]:
    """Every embedded model the memories declared (each declares its target at import)."""
    return [_targets[label] for label in sorted(_targets)]


def queued() -> bool:
    """Whether embeddings enqueued go to a worker through a broker (production, CI), not
    inline (the default set-up, with no broker)."""
    return not current_app.conf.task_always_eager


def enqueue(
    target: EmbeddingTarget, pk: object, *, answered: bool = False, asked: bool = True
) -> None:
    """Embed row ``pk`` in the background once the current transaction commits.

    Without a broker (the default set-up) tasks would run inline and make the request wait
    on the provider that has just failed it; the row stays pending for the next backfill.
    When the provider did answer the request (``answered``: for a text the write then did
    not store), or was not asked (``asked`` false: a write that answers before its
    vector), it is asked after the commit instead: once the answer is written, in a
    request (``outreach.after_answer``), else right away.
    """
    if not queued():
        if answered or not asked:
            transaction.on_commit(
                lambda: after_answer.defer(lambda: _embed_now(target, pk)), robust=True
            )
            return
        logger.info("no Celery broker: %s %s stays pending for the backfill", target.label, pk)
        return
    transaction.on_commit(lambda: _send(target, pk))


def _embed_now(target: EmbeddingTarget, pk: object) -> None:
    # After the commit and outside any lock, within the request's time budget; the write
    # has succeeded whatever happens here (a row without a vector waits for the backfill).
    row = target.model._default_manager.filter(pk=pk).first()
    if row is None or row.embedding_status == READY:
        return
    embedded = embed_within_budget(target.text(row))
    if embedded.vector is not None:
        _store(target, row, embedded.vector, embedded.model)


def _send(target: EmbeddingTarget, pk: object) -> None:
    # The row is committed already; if the broker is unreachable the periodic backfill
    # embeds it later, so the write that queued it still succeeds.
    try:
        current_app.send_task(target.task, args=[str(pk)], retry=False)
    except Exception:
        logger.warning("could not queue the embedding of %s %s; backfill will", target.label, pk)


def _unchanged(target: EmbeddingTarget, row: EmbeddedModel) -> models.QuerySet[Any]:
    """``row`` as it was read: gone from the query if it changed or went meanwhile."""
    same = {target.revision: getattr(row, target.revision)} if target.revision else {}
    return target.model._default_manager.filter(pk=row.pk, **same)


def _store(target: EmbeddingTarget, row: EmbeddedModel, vector: list[float], model: str) -> int:
    """Record a computed embedding unless the row changed or went meanwhile."""
    return _unchanged(target, row).update(
        embedding=vector, embedding_model=model, embedding_status=READY
    )


def _failed(target: EmbeddingTarget, row: EmbeddedModel, model: str) -> None:
    """Mark ``row`` as failed for good by ``model`` (another model will try it again)."""
    _unchanged(target, row).exclude(embedding_status=READY).update(
        embedding_status=FAILED, embedding_model=model
    )


def embed_rows(target: EmbeddingTarget, rows: Iterable[EmbeddedModel]) -> int:
    """Embed ``rows`` in provider batches and store the vectors. Returns how many stored.

    A text that several rows of a batch share (the same finding saved again, an entry
    copied to another account) is sent once: the model gives every copy the same vector.
    """
    provider = get_provider()
    rows = list(rows)
    stored = 0
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        texts = [target.text(row) for row in batch]
        distinct = list(dict.fromkeys(texts))
        by_text = dict(zip(distinct, provider.embed_documents(distinct), strict=True))
        vectors = [by_text[text] for text in texts]
        for row, vector in zip(batch, vectors, strict=True):
            if any(vector):
                stored += _store(target, row, vector, provider.model)
            else:  # nothing to embed: never compared (its distance would be undefined)
                _failed(target, row, provider.model)
    return stored


def embed_one(target: EmbeddingTarget, pk: object) -> str:
    """Embed one row: ``gone``, ``current`` (nothing to do), ``embedded`` or ``failed``.

    Every write that changes a row's text sets it pending, so a ready row of the current
    model needs nothing.
    """
    provider = get_provider()
    row = target.model._default_manager.filter(pk=pk).first()
    if row is None:
        return "gone"
    if row.embedding_status == READY and row.embedding_model == provider.model:
        return "current"
    try:
        embed_rows(target, [row])
    except PermanentEmbeddingError as exc:
        logger.error("embedding %s %s failed for good: %s", target.label, row.pk, exc)
        # Only the text that failed is marked: a newer version stays pending for its task.
        _failed(target, row, provider.model)
        return "failed"
    return "embedded"


def backfill(target: EmbeddingTarget, *, limit: int = 1000) -> int:
    """Embed backlog rows that are pending, or were embedded (or failed) by another model."""
    provider = get_provider()
    rows = list(
        target.backlog()
        .exclude(embedding_status=FAILED, embedding_model=provider.model)
        .exclude(embedding_status=READY, embedding_model=provider.model)[:limit]
    )
    return embed_rows(target, rows) if rows else 0


def waiting(target: EmbeddingTarget) -> int:
    """How many rows of every account the backfill has still to embed with the model in
    force (pending, or embedded or failed by another model)."""
    model = get_provider().model
    return (
        target.backlog()
        .exclude(embedding_status=FAILED, embedding_model=model)
        .exclude(embedding_status=READY, embedding_model=model)
        .count()
    )


@dataclass(frozen=True)
class Progress:
    """How far one account's rows of a target are embedded by the model in force."""

    #: What the rows are, in the plural ("notes", "entries").
    rows: str
    total: int
    current: int
    failed: int

    @property
    def waiting(self) -> int:
        return self.total - self.current - self.failed


def progress(target: EmbeddingTarget, *, account_id: int) -> Progress:
    """Of the account's shared backlog rows (what search compares), how many carry a vector
    of the model in force, and how many failed for good; one query."""
    model = get_provider().model
    counts = target.shared(target.backlog().filter(account_id=account_id)).aggregate(
        total=models.Count("pk"),
        current=models.Count("pk", filter=models.Q(embedding_status=READY, embedding_model=model)),
        failed=models.Count("pk", filter=models.Q(embedding_status=FAILED, embedding_model=model)),
    )
    rows = str(target.model._meta.verbose_name_plural)
    return Progress(rows, counts["total"], counts["current"], counts["failed"])


def mark_for_reembedding(rows: models.QuerySet[Any]) -> int:
    """Mark ``rows`` not embedded by the current model pending again."""
    return rows.exclude(embedding_model=get_provider().model, embedding_status=READY).update(
        embedding_status=PENDING
    )


@dataclass(frozen=True)
class Backlog:
    """One embedded model's rows across every account, for the operator (never per
    account): how many wait for an embedding, since when, and how many carry a vector of
    the model in force."""

    #: The embedded model, as ``app_label.model_name``.
    label: str
    pending: int
    oldest_pending: datetime | None
    current: int
    total: int


def backlogs() -> list[Backlog]:
    """Each target's :class:`Backlog`, one query each."""
    model = get_provider().model
    found = []
    for target in targets():
        counts = (
            target.backlog()
            .order_by()
            .aggregate(
                total=models.Count("pk"),
                current=models.Count(
                    "pk", filter=models.Q(embedding_status=READY, embedding_model=model)
                ),
                pending=models.Count("pk", filter=models.Q(embedding_status=PENDING)),
                oldest=models.Min(target.written_at, filter=models.Q(embedding_status=PENDING)),
            )
        )
        found.append(
            Backlog(
                target.model._meta.label_lower,
                counts["pending"],
                counts["oldest"],
                counts["current"],
                counts["total"],
            )
        )
    return found
