"""An export's lines read back (:mod:`prospect_memory.lifecycle.export` describes them):
numbered and hashed as they come, the manifest checked against them, and each record's
fields read as the type they must be; anything else refused, naming its line."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from outreach.errors import KitError
from outreach.validation import FieldProblems
from prospect_memory.core.integrity import invisible_problem
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.export import MANIFEST


class ImportRefused(KitError):
    """An export that cannot be imported, or an account it cannot go into. Nothing of it
    was stored."""

    code = "import_refused"
    http_status = 400

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None) -> None:
        if line is not None:
            message = f"line {line}: {message}"
        message = f"{message} Nothing was imported."
        details = {} if line is None else {"line": line}
        if field is not None:
            details["field"] = field
        super().__init__(message, details=details)
        self.line, self.field = line, field


#: The times a record may name (older or later ones are not Kit's, and some could not be
#: read back).
FIRST_YEAR, LAST_YEAR = 1900, 2999


def read_lines(file) -> Iterator[bytes]:
    """The lines of a binary file, none read past IMPORT_LINE_MAX_BYTES (a longer line is
    given in pieces, and refused at its first)."""
    limit = lifecycle_settings.IMPORT_LINE_MAX_BYTES + 2
    while line := file.readline(limit):
        yield line


class Stream:
    """The lines of an export, numbered, each line before the manifest hashed."""

    def __init__(self, lines: Iterable[bytes | str]) -> None:
        self._lines = enumerate(lines, start=1)
        self._digest = hashlib.sha256()
        self.manifest: Fields | None = None

    def records(self) -> Iterator[Fields]:
        limit = lifecycle_settings.IMPORT_LINE_MAX_BYTES
        for number, raw in self._lines:
            text = _line_text(raw)
            if len(text) > limit:
                self._digest.update(text + b"\n")
                raise ImportRefused(
                    f"longer than {limit:,} bytes; no record of an export is.", line=number
                )
            if self.manifest is not None:
                if text.strip():
                    raise ImportRefused("found after the manifest, the last line.", line=number)
                continue
            fields = self._parse(number, text)
            if fields.type == MANIFEST:
                self.manifest = fields
                continue
            self._digest.update(text + b"\n")
            yield fields

    def _parse(self, number: int, text: bytes) -> Fields:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            self._digest.update(text + b"\n")
            raise ImportRefused("not a JSON object; the file is malformed.", line=number) from None
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            self._digest.update(text + b"\n")
            raise ImportRefused("not a record (a JSON object with a type).", line=number)
        return Fields(number, data)

    def drain(self) -> None:
        """Read what is left only to hash it: a refusal says so when the file was altered."""
        for _, raw in self._lines:
            if self.manifest is not None:
                return
            text = _line_text(raw)
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                data = None
            if isinstance(data, dict) and data.get("type") == MANIFEST:
                self.manifest = Fields(0, data)
            else:
                self._digest.update(text + b"\n")

    def altered(self) -> bool:
        return self.manifest is not None and self.manifest.data.get("sha256") != self.digest

    @property
    def digest(self) -> str:
        return self._digest.hexdigest()

    def altered_refusal(self) -> ImportRefused:
        return ImportRefused(
            "the file's checksum does not match its manifest: it was altered after the "
            "export. Export again."
        )

    def check_manifest(self, counts: dict[str, int]) -> None:
        if self.manifest is None:
            raise ImportRefused(
                "the file has no manifest (its last line): it was cut short. Export again."
            )
        if self.altered():
            raise self.altered_refusal()
        stated = self.manifest.data.get("counts")
        if not isinstance(stated, dict) or {k: v for k, v in stated.items() if v} != {
            k: v for k, v in counts.items() if v
        }:
            raise self.manifest.refuse(
                f"the manifest counts {stated} records but the file holds {dict(counts)}."
            )


def _line_text(raw: bytes | str) -> bytes:
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    return raw.rstrip(b"\r\n")


class Fields:
    """One record's fields, each read as the type it must be, or refused naming its line."""

    def __init__(self, number: int, data: dict, type_: str | None = None) -> None:
        self.number, self.data = number, data
        self.type = type_ or data.get("type")

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

    def text(self, name: str, *, null: bool = False) -> str | None:
        return self._get(name, (str,), "text", null=null)

    def integer(self, name: str) -> int:
        value = self._get(name, (int,), "a whole number", null=False)
        if value < 0:
            raise self.refuse(f"{name} must not be negative.")
        return value

    def boolean(self, name: str) -> bool:
        return self._get(name, (bool,), "true or false", null=False)

    def choice(self, name: str, choices: list[str]) -> str:
        value = self.text(name)
        if value not in choices:
            raise self.refuse(f"{name} {value!r} is not one of {', '.join(choices)}.")
        return value

    def moment(self, name: str, *, null: bool = False) -> datetime | None:
        value = self.text(name, null=null)
        if value is None:
            return None
        parsed = _parsed(parse_datetime, value)
        if parsed is None or timezone.is_naive(parsed):
            raise self.refuse(f"{name} must be an ISO 8601 time with its offset.")
        try:
            year = parsed.astimezone(UTC).year
        except OverflowError:
            year = 0
        if not FIRST_YEAR <= year <= LAST_YEAR:
            raise self.refuse(f"{name} must fall between {FIRST_YEAR} and {LAST_YEAR}.")
        return parsed

    def day(self, name: str) -> date:
        parsed = _parsed(parse_date, self.text(name))
        if parsed is None:
            raise self.refuse(f"{name} must be an ISO 8601 date.")
        if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
            raise self.refuse(f"{name} must fall between {FIRST_YEAR} and {LAST_YEAR}.")
        return parsed

    def texts(self, name: str) -> list[str]:
        values = self._get(name, (list,), "a list of texts", null=False)
        if not all(isinstance(value, str) for value in values):
            raise self.refuse(f"{name} must be a list of texts.")
        return values

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


def _parsed(parse, value: str):
    try:
        return parse(value)
    except ValueError:
        return None


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
