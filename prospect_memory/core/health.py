"""The sections of the memory health page, without the page importing any memory.

The page (``prospect_memory.core.views.health_page``) renders each registered section in
turn: a template and its context, built for the account being looked at. Each memory (the
notes first, then business memory) registers its section at ``ready()``, as it registers
its MCP tools.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class HealthSection:
    template: str
    context: dict[str, Any] = field(default_factory=dict)


_builders: list[Callable[[Any], HealthSection]] = []

#: Flagged items (SPEC 15) a section lists by name; the rest are counted.
FLAGGED_SHOWN = 20


def register_health_section(build: Callable[[Any], HealthSection]) -> None:
    """Add a section, built with the account (``build(account)``), to the health page."""
    if build not in _builders:
        _builders.append(build)


def health_sections(account) -> list[HealthSection]:
    return [build(account) for build in _builders]


def embeddings_section(account) -> HealthSection:
    """The model in force, where its thresholds come from, and how far each memory's rows
    are embedded by it (after a change of model, the rest are re-embedded in the
    background by the backfill)."""
    from prospect_memory.core import embedding_pipeline
    from prospect_memory.core.embeddings import get_provider

    provider = get_provider()
    return HealthSection(
        "prospect_memory/_embeddings_health.html",
        {
            "model": provider.model,
            "thresholds": provider.thresholds,
            "progress": [
                embedding_pipeline.progress(target, account_id=account.pk)
                for target in embedding_pipeline.targets()
            ],
        },
    )
