"""Calling the embedding provider from a request, within a time budget.

A write must answer quickly and must never lose a row to a slow or failing provider, so the
provider gets ``EMBED_TIME_BUDGET_SECONDS``; past that the row is stored with a pending
embedding and the pipeline (``prospect_memory.core.embedding_pipeline``) finishes the work.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

from prospect_memory.core.conf import core_settings
from prospect_memory.core.embeddings import EmbeddingError, EmbeddingProvider, get_provider

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _new_pool() -> ThreadPoolExecutor:
    # Threads outlive a timed-out call without blocking the request that gave up on it.
    return ThreadPoolExecutor(max_workers=8, thread_name_prefix="kit-embed")


_pool = _new_pool()


def _new_pool_after_fork() -> None:
    # A forked child has none of its parent's threads, but the pool it inherits counts its
    # parent's idle ones: it would queue each call for a thread that never comes, and every
    # write would wait out its budget. The child starts a pool of its own.
    global _pool
    _pool = _new_pool()


os.register_at_fork(after_in_child=_new_pool_after_fork)


@dataclass(frozen=True)
class Embedded:
    provider: EmbeddingProvider
    vector: list[float] | None
    #: Why there is no vector, in words an agent can act on.
    problem: str = ""
    #: The embedded text, to tell whether the vector fits what a write finally stores.
    #: Kept in memory only: a hash of it stored beside a ciphertext would let short values
    #: be guessed.
    text: str = ""

    @property
    def model(self) -> str:
        return self.provider.model

    @property
    def asked(self) -> bool:
        """Whether the provider was asked (it answered, or a problem says why not)."""
        return self.vector is not None or bool(self.problem)

    @classmethod
    def none(cls) -> Embedded:
        """No vector, and none was asked for."""
        return cls(get_provider(), None)


def embed_within_budget(text: str, *, query: bool = False) -> Embedded:
    embedded, _ = embed_while(text, lambda: None, query=query)
    return embedded


def embed_while(text: str, work: Callable[[], T], *, query: bool = False) -> tuple[Embedded, T]:
    """:func:`embed_within_budget`, with ``work`` done in this thread while a provider that
    takes time computes the vector (a write's integrity check of the same text): ``work``'s
    time is then inside the embedding's, and the budget counts from the request to the
    provider. With an immediate provider, ``work`` runs after the vector."""
    provider = get_provider()
    budget = float(core_settings.EMBED_TIME_BUDGET_SECONDS)

    def vector_of(timeout: float | None) -> list[float]:
        if query:
            return provider.embed_query(text, timeout=timeout)
        return provider.embed_documents([text], timeout=timeout)[0]

    if provider.immediate:  # nothing to wait for: a thread would cost more than the call
        embedded = _outcome(provider, text, budget, lambda: vector_of(None))
        return embedded, work()
    started = time.monotonic()
    future = _pool.submit(vector_of, budget)
    try:
        done = work()
    except BaseException:
        future.cancel()
        raise
    left = max(0.0, budget - (time.monotonic() - started))
    return _outcome(provider, text, budget, lambda: future.result(timeout=left)), done


def _outcome(
    provider: EmbeddingProvider, text: str, budget: float, vector: Callable[[], list[float]]
) -> Embedded:
    """The vector ``vector`` gives, or why there is none."""
    try:
        values = vector()
    except FutureTimeout:
        logger.warning("embedding provider %s exceeded the %.1fs budget", provider.model, budget)
        return Embedded(provider, None, f"the embedding provider did not answer within {budget:g}s")
    except EmbeddingError as exc:
        logger.warning("embedding provider %s failed: %s", provider.model, exc)
        return Embedded(provider, None, "the embedding provider is unavailable")
    if not any(values):
        # Text with nothing to embed (no words: "???", an emoji): its distance to anything
        # is undefined, so it is compared with nothing.
        return Embedded(provider, None, "the text has no words to compare")
    return Embedded(provider, values, text=text)
