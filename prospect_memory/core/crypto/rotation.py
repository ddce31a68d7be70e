"""Key rotation: every sealed value of every model moved to the newest key.

Models declare their encrypted attributes with :class:`~prospect_memory.core.crypto.SealedField`;
this module finds them all, so a memory added later is rotated without being named here.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db import transaction
from django.db.models import Model

from prospect_memory.core.crypto import SealedField, keyring


@dataclass(frozen=True)
class Resealed:
    label: str
    seen: int
    changed: int


def sealed_fields(model: type[Model]) -> list[SealedField]:
    found: dict[str, SealedField] = {}
    for klass in reversed(model.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, SealedField):
                found[name] = value
    return list(found.values())


def sealed_models() -> list[tuple[type[Model], list[SealedField]]]:
    """Every concrete model with sealed attributes, in a stable order."""
    models = []
    for model in apps.get_models():
        fields = sealed_fields(model)
        if fields and not model._meta.proxy:
            models.append((model, fields))
    return sorted(models, key=lambda pair: pair[0]._meta.label)


def rows_reseal(
    model: type[Model], fields: list[SealedField], *, batch_size: int = 500
) -> Resealed:
    """Re-encrypt ``model``'s sealed values not yet under the newest key.

    Batches of short transactions with row locks, so it can run while Kit serves traffic.
    """
    ring = keyring()
    columns = [field.column for field in fields]
    seen = changed = 0
    last_pk = None
    while True:
        with transaction.atomic():
            rows = model._default_manager.select_for_update().order_by("pk")
            if last_pk is not None:
                rows = rows.filter(pk__gt=last_pk)
            batch = list(rows[:batch_size])
            if not batch:
                break
            for row in batch:
                seen += 1
                if all(field.is_current(row, ring) for field in fields):
                    continue
                for field in fields:
                    setattr(row, field.name, field.stored_text(row))
                row.save(update_fields=columns)
                changed += 1
            last_pk = batch[-1].pk
    return Resealed(str(model._meta.verbose_name_plural), seen, changed)


def everything_reseal(*, batch_size: int = 500) -> list[Resealed]:
    """:func:`rows_reseal` for every sealed model. Afterwards older keys can go."""
    return [rows_reseal(model, fields, batch_size=batch_size) for model, fields in sealed_models()]
