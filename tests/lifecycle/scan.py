"""After an erasure, look in every table of every installed app (from the models' metadata,
never a hand-kept list) for anything of the erased subject: its texts (a domain, a name, a
row's id written as text), its ids in id columns and id arrays, its ciphertexts and its
vectors. A table added later is scanned without anyone remembering to add it.

Tables that carry an account are read for the erased account's rows only (other accounts'
research about the same company is theirs); tables without one are read whole. Some tables
keep a subject on purpose; ``KEPT`` says which and why, per kind of erasure.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.apps import apps
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Cast
from pgvector.django import VectorField

from outreach.models import Account

#: Tables that keep the subject of an erasure on purpose, by kind, with the reason.
KEPT = {
    "company": {
        # The CRM's own records of people contacted at the company, and above all the
        # suppression list: a company that asked to be forgotten must not be contacted again.
        "outreach.prospect": "the CRM's contacts at the company (the CRM erases its own)",
        "outreach.message": "the CRM's messages to those contacts",
        "outreach.reply": "the CRM's replies from those contacts",
        "outreach.suppression": "the do-not-contact list must outlive the erasure",
    },
    "member": {
        "auth.user": "the person's login (they may hold seats elsewhere)",
        "axes.accesslog": "the person's sign-in security log",
        "axes.accessattempt": "the person's sign-in security log",
        "axes.accessfailurelog": "the person's sign-in security log",
    },
    "account": {
        "auth.user": "people may hold seats in other accounts",
        "prospect_memory.erasure": "the record of the erasure itself (who, when, counts)",
    },
}


@dataclass
class Subject:
    kind: str
    account_id: int
    texts: set[str] = field(default_factory=set)
    ids: set[uuid.UUID] = field(default_factory=set)
    #: Integer ids of rows of these models (foreign keys to them must not remain).
    refs: dict[type[models.Model], set[int]] = field(default_factory=dict)
    #: Integer ids kept without a foreign key (columns named ``*_id`` or ``*_ref``).
    numbers: set[int] = field(default_factory=set)
    ciphertexts: set[bytes] = field(default_factory=set)
    vectors: list[list[float]] = field(default_factory=list)

    def every_text(self) -> set[str]:
        return {*self.texts, *(str(i) for i in self.ids)}


def _account_field(model: type[models.Model]) -> models.Field | None:
    for candidate in model._meta.concrete_fields:
        if candidate.is_relation and candidate.many_to_one and candidate.related_model is Account:
            return candidate
    return None


def _text_like(column) -> bool:
    return isinstance(column, (models.CharField, models.TextField))


def _condition(column: models.Field, subject: Subject) -> Q | None:
    name = column.attname
    texts = subject.every_text()
    if column.is_relation:
        target = column.target_field
        if isinstance(target, models.UUIDField) and subject.ids:
            return Q(**{f"{name}__in": subject.ids})
        refs = subject.refs.get(column.related_model)
        return Q(**{f"{name}__in": refs}) if refs else None
    if isinstance(column, models.UUIDField):
        return Q(**{f"{name}__in": subject.ids}) if subject.ids else None
    if isinstance(column, models.IntegerField) and name.endswith(("_id", "_ref")):
        return Q(**{f"{name}__in": subject.numbers}) if subject.numbers else None
    if isinstance(column, ArrayField):
        if isinstance(column.base_field, models.UUIDField):
            return Q(**{f"{name}__overlap": list(subject.ids)}) if subject.ids else None
        if _text_like(column.base_field):
            return _any_text(f"_scan_{name}", texts)
        return None
    if isinstance(column, models.JSONField):
        return _any_text(f"_scan_{name}", texts)
    if _text_like(column):
        found = Q()
        for text in texts:
            found |= Q(**{f"{name}__icontains": text})
        return found if texts else None
    if isinstance(column, models.BinaryField):
        return Q(**{f"{name}__in": subject.ciphertexts}) if subject.ciphertexts else None
    if isinstance(column, VectorField):
        found = Q()
        for vector in subject.vectors:
            found |= Q(**{name: vector})
        return found if subject.vectors else None
    return None


def _any_text(alias: str, texts: set[str]) -> Q | None:
    found = Q()
    for text in texts:
        found |= Q(**{f"{alias}__icontains": text})
    return found if texts else None


def leftovers(subject: Subject) -> list[str]:
    """``app.model.field: rows`` for every column that still holds something of the
    subject, in the rows the erasure was about."""
    kept = KEPT[subject.kind]
    found = []
    for model in apps.get_models(include_auto_created=True):
        meta = model._meta
        if meta.proxy or not meta.managed or meta.label_lower in kept:
            continue
        rows = model._base_manager.all()
        account = _account_field(model)
        if account is not None:
            rows = rows.filter(**{account.attname: subject.account_id})
        for column in meta.concrete_fields:
            condition = _condition(column, subject)
            if condition is None:
                continue
            scanned = rows
            if isinstance(column, (ArrayField, models.JSONField)) and not (
                isinstance(column, ArrayField) and isinstance(column.base_field, models.UUIDField)
            ):
                scanned = rows.annotate(
                    **{f"_scan_{column.attname}": Cast(column.attname, models.TextField())}
                )
            count = scanned.filter(condition).count()
            if count:
                found.append(f"{meta.label_lower}.{column.name}: {count}")
    return found
