"""One record of an export read back: each field read as the type it must be, or the
record refused naming its line and field (:class:`ImportRefused`). The lifecycle reads the
file's lines (``prospect_memory.lifecycle.lines``); each memory reads its records' fields."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal, TypeVar, overload

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from outreach.errors import KitError
from outreach.validation import FieldProblems
from prospect_memory.core.integrity import invisible_problem, scan_text

T = TypeVar("T")


class ImportRefused(KitError):
    """An export that cannot be imported, or an account it cannot go into. Nothing of it
    was stored."""

    code = "import_refused"
    http_status = 400

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None) -> None:
        if line is not None:
            message = f"line {line}: {message}"
        message = f"{message} Nothing was imported."
        details: dict[str, object] = {} if line is None else {"line": line}
        if field is not None:
            details["field"] = field
        super().__init__(message, details=details)
        self.line, self.field = line, field


#: The times a record may name (older or later ones are not Kit's, and some could not be
#: read back).
FIRST_YEAR, LAST_YEAR = 1900, 2999
#: How far past this Kit's clock a time the record says already happened may lie (the
#: exporting Kit's clock may run ahead); only a time that is to come (an expiry) may lie
#: further.
CLOCK_SKEW = timedelta(hours=1)
#: The largest whole number a record may hold (PostgreSQL's ``bigint``).
LARGEST = 2**63 - 1


class Fields:
    """One record's fields, each read as the type it must be, or refused naming its line."""

    def __init__(self, number: int, data: dict[str, Any], type_: str | None = None) -> None:
        self.number, self.data = number, data
        self.type: str = type_ or data.get("type", "")

    def refuse(self, message: str, *, field: str | None = None) -> ImportRefused:
        return ImportRefused(
            f"{self.type} record: {message}", line=self.number or None, field=field
        )

    def check(self, problems: FieldProblems) -> None:
        """Refuse the record with every problem a write's rules found in it, if any (the
        refusal names the first field)."""
        if problems.fields:
            found = (message for messages in problems.fields.values() for message in messages)
            raise self.refuse(" ".join(found), field=next(iter(problems.fields)))

    def label(self, name: str, *, max_length: int) -> str:
        """A label a record names its writer by, read as Kit writes one: one line of at
        most ``max_length`` characters, no character the write path refuses."""
        value = self.text(name)
        if len(value) > max_length or "\n" in value or "\r" in value:
            raise self.refuse(
                f"{name} must be one line of at most {max_length} characters.", field=name
            )
        problem = invisible_problem(value, name)
        if problem:
            raise self.refuse(problem, field=name)
        if scan_text(value, name):
            # Kit writes a label itself (who wrote the entry), agents read it beside the
            # value: one that reads as an order to them did not come from Kit.
            raise self.refuse(
                f"{name} reads as an instruction, not as the name of who wrote it.", field=name
            )
        return value

    def _get(self, name: str, kinds: tuple[type, ...], what: str, *, null: bool) -> Any:
        if name not in self.data:
            raise self.refuse(f"{name} is missing.")
        value = self.data[name]
        if value is None and null:
            return None
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.refuse(f"{name} must be {what}.")
        return value

    @overload
    def text(self, name: str, *, null: Literal[False] = False) -> str: ...
    @overload
    def text(self, name: str, *, null: bool) -> str | None: ...
    def text(self, name: str, *, null: bool = False) -> str | None:
        value: str | None = self._get(name, (str,), "text", null=null)
        return value

    def integer(self, name: str) -> int:
        value: int = self._get(name, (int,), "a whole number", null=False)
        if value < 0:
            raise self.refuse(f"{name} must not be negative.")
        if value > LARGEST:
            raise self.refuse(f"{name} must be at most {LARGEST:,}.")
        return value

    def boolean(self, name: str) -> bool:
        value: bool = self._get(name, (bool,), "true or false", null=False)
        return value

    def choice(self, name: str, choices: list[str]) -> str:
        value = self.text(name)
        if value not in choices:
            raise self.refuse(f"{name} {value!r} is not one of {', '.join(choices)}.")
        return value

    @overload
    def moment(
        self, name: str, *, null: Literal[False] = False, to_come: bool = False
    ) -> datetime: ...
    @overload
    def moment(self, name: str, *, null: bool, to_come: bool = False) -> datetime | None: ...
    def moment(self, name: str, *, null: bool = False, to_come: bool = False) -> datetime | None:
        """A time with its offset, within the years Kit keeps; one that already happened
        (every time but an expiry, ``to_come``) no later than now."""
        value = self.text(name, null=null)
        if value is None:
            return None
        parsed: datetime | None = _parsed(parse_datetime, value)
        if parsed is None or timezone.is_naive(parsed):
            raise self.refuse(f"{name} must be an ISO 8601 time with its offset.")
        try:
            year = parsed.astimezone(UTC).year
        except OverflowError:
            year = 0
        if not FIRST_YEAR <= year <= LAST_YEAR:
            raise self.refuse(f"{name} must fall between {FIRST_YEAR} and {LAST_YEAR}.")
        if not to_come and parsed > timezone.now() + CLOCK_SKEW:
            raise self.refuse(f"{name} lies in the future; it says when something happened.")
        return parsed

    def day(self, name: str) -> date:
        parsed: date | None = _parsed(parse_date, self.text(name))
        if parsed is None:
            raise self.refuse(f"{name} must be an ISO 8601 date.")
        if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
            raise self.refuse(f"{name} must fall between {FIRST_YEAR} and {LAST_YEAR}.")
        return parsed

    def texts(self, name: str) -> list[str]:
        values: list[str] = self._get(name, (list,), "a list of texts", null=False)
        if not all(isinstance(value, str) for value in values):
            raise self.refuse(f"{name} must be a list of texts.")
        return values

    @overload
    def ref(self, name: str, *, null: Literal[False] = False) -> str: ...
    @overload
    def ref(self, name: str, *, null: bool) -> str | None: ...
    def ref(self, name: str, *, null: bool = False) -> str | None:
        value = self.text(name, null=null)
        if value is not None and _uuid(value) is None:
            raise self.refuse(f"{name} must be the id of a record of the export.")
        return value

    def refs(self, name: str) -> list[str]:
        values = self.texts(name)
        if any(_uuid(value) is None for value in values):
            raise self.refuse(f"{name} must list ids.")
        return values

    def section(self, name: str) -> Fields:
        return Fields(self.number, self._get(name, (dict,), "an object", null=False), self.type)

    def value(self, name: str) -> Any:
        if name not in self.data:
            raise self.refuse(f"{name} is missing.")
        return self.data[name]


def _parsed(parse: Callable[[str], T | None], value: str) -> T | None:
    try:
        return parse(value)
    except ValueError:
        return None


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
