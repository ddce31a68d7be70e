"""Cosine distances, computed in PostgreSQL (pgvector), only between vectors of one model."""

from __future__ import annotations

from django.db.models import Case, FloatField, When
from pgvector.django import CosineDistance

#: The longest model name recorded with a vector (its column's width).
MODEL_NAME_MAX_CHARS = 100


def distance_to(
    vector: list[float] | None, model: str, *, column: str = "embedding"
) -> Case | None:
    """Cosine distance to ``vector`` for rows embedded by ``model``; NULL for the rest
    (pending, failed, or another model's vectors, which are never compared)."""
    if vector is None:
        return None
    return Case(
        When(
            embedding_model=model,
            **{f"{column}__isnull": False},
            then=CosineDistance(column, vector),
        ),
        default=None,
        output_field=FloatField(),
    )
