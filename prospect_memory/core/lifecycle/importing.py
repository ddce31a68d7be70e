"""What every memory's side of an import shares (:class:`ImportSession`): the map from the
file's ids to new ones, the account's seats by name, rows stored a batch at a time, and a
row's integrity checked again by this Kit."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, overload

from django.db.models import Model

from outreach.models import Member
from prospect_memory.core.integrity import Flag
from prospect_memory.core.lifecycle.fields import Fields, ImportRefused
from prospect_memory.core.models import FlaggedModel

if TYPE_CHECKING:
    from outreach.models import Account


class ImportSession:
    """One import into ``account``: ``member`` receives the own memory the file holds."""

    def __init__(self, account: Account, member: Member | None, *, batch_rows: int) -> None:
        self.account, self.member, self.batch_rows = account, member, batch_rows
        self._seats = _seats(account)
        self._ids: dict[tuple[str, str], uuid.UUID] = {}
        self._defined: dict[str, set[str]] = defaultdict(set)
        #: References not defined yet, with the line of the first record that made each.
        self._wanted: dict[str, dict[str, int]] = defaultdict(dict)
        self._pending: dict[type[Model], list[Model]] = defaultdict(list)
        self._after_store: dict[type[Model], Callable[[type[Model], list[Model]], None]] = {}

    # ids

    def new_id(self, kind: str, old: str) -> uuid.UUID:
        """The new id of the file's record ``old`` of ``kind``, the same at every call."""
        return self._ids.setdefault((kind, old), uuid.uuid4())

    def define(self, kind: str, fields: Fields) -> uuid.UUID:
        """The new id of the record ``fields`` holds (refused if the file holds it twice)."""
        old = fields.ref("id")
        if old in self._defined[kind]:
            raise fields.refuse(f"id {old} is in the file twice.")
        self._defined[kind].add(old)
        return self.new_id(kind, old)

    @overload
    def refer(self, kind: str, old: str, fields: Fields) -> uuid.UUID: ...
    @overload
    def refer(self, kind: str, old: None, fields: Fields) -> None: ...
    @overload
    def refer(self, kind: str, old: str | None, fields: Fields) -> uuid.UUID | None: ...
    def refer(self, kind: str, old: str | None, fields: Fields) -> uuid.UUID | None:
        """The new id of a record ``fields`` names, which the file must hold somewhere."""
        if old is None:
            return None
        if old not in self._defined[kind]:
            self._wanted[kind].setdefault(old, fields.number)
        return self.new_id(kind, old)

    def check_references(self) -> None:
        """Refuse a reference to a record the file does not hold."""
        for kind, wanted in self._wanted.items():
            for old, number in wanted.items():
                if old not in self._defined[kind]:
                    raise ImportRefused(
                        f"names {kind} {old}, which the file does not hold.", line=number
                    )

    def seat(self, fields: Fields, name: str) -> int | None:
        """The member of the account the record names by username or email, if any."""
        person = fields.text(name, null=True)
        return self._seats.get(person.casefold()) if person else None

    # storing

    def after_store(
        self, model: type[Model], then: Callable[[type[Model], list[Model]], None]
    ) -> None:
        """Call ``then`` with each batch of ``model``'s rows once they are stored (one
        memory's rows: a model two memories import would be stored by both)."""
        if model in self._after_store:
            raise ValueError(f"{model.__name__} is imported by two memories")
        self._after_store[model] = then

    def queue(self, row: Model) -> None:
        batch = self._pending[type(row)]
        batch.append(row)
        if len(batch) >= self.batch_rows:
            self.store(type(row))

    def store(self, model: type[Model]) -> None:
        """Store the rows of ``model`` queued so far (a row another one names is stored
        before it)."""
        rows = self._pending.pop(model, [])
        if rows:
            model._default_manager.bulk_create(rows)
        if model in self._after_store:
            self._after_store[model](model, rows)


def checked_again(row: FlaggedModel, flags: list[Flag], fields: Fields) -> None:
    """The flags this Kit's checks find in the row's text: the file's are not trusted, and
    neither is its word that a person reviewed the text (a row marked reviewed is never
    checked again, so a file could exempt an agent's text from every future rule). A row
    imported is unreviewed here; a flagged one keeps the time the file says it was
    flagged, if any."""
    file = fields.section("integrity")
    flagged_at = file.moment("flagged_at", null=True)
    file.moment("reviewed_at", null=True)  # read as a time, as the file must hold one
    row.set_flags(flags, now=flagged_at if flags and flagged_at else None)
    row.integrity_reviewed_at = None


def _seats(account: Account) -> dict[str, int]:
    """The account's members by username and by email (case-folded)."""
    seats: dict[str, int] = {}
    rows = Member.objects.filter(account=account).values_list("pk", "user__username", "user__email")
    for pk, username, email in rows:
        for name in (username, email):
            if name:
                seats.setdefault(name.casefold(), pk)
    return seats
