"""What is wrong with what a caller sent, in one wording for every operation.

Each problem begins with the field it is about and says what to send instead ("limit must
be a whole number from 1 to 20"; a schema problem: "limit: 5000 is too large; give at most
20"), in words, never in the schema's or Python's ("is not of type", a regular expression,
``None``). A call's problems are collected by field and reported together: the
error's message is the first problem (with how many more there are), its details every
problem by field. The checks of ``operations.execute`` (the input schema) and each app's
own rules report through it alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from outreach.characters import cut, readable
from outreach.errors import ValidationFailed

T = TypeVar("T")


class FieldError(Exception):
    """One field's problem, raised by a check of a single value."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class FieldProblems:
    """The problems of one call, by field, reported all at once by :meth:`raise_if_any`."""

    def __init__(self, fields: dict[str, list[str]] | None = None) -> None:
        self.fields: dict[str, list[str]] = dict(fields or {})

    def add(self, field: str, message: str) -> None:
        """``message`` begins with ``field`` (no final full stop)."""
        self.fields.setdefault(field, []).append(message)

    def check(self, clean: Callable[[object], T], value: object) -> T | None:
        """``clean(value)``, or None with its :class:`FieldError` collected."""
        try:
            return clean(value)
        except FieldError as error:
            self.add(error.field, error.message)
            return None

    def raise_if_any(self, context: str = "") -> None:
        """ValidationFailed with every problem, if there is any; ``context`` opens the
        message (which call the arguments were for)."""
        if not self.fields:
            return
        messages = [message for found in self.fields.values() for message in found]
        more = len(messages) - 1
        also = f" (and {more} more problem{'s' if more > 1 else ''}, see details)" if more else ""
        raise ValidationFailed(f"{context}{messages[0]}{also}.", details={"fields": self.fields})


_KINDS = {
    "string": "a text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "an object",
    "null": "null",
}


def shown(value: Any, limit: int = 40) -> str:
    """A value as the caller wrote it (JSON), cut to ``limit`` characters; an array or an
    object by its kind and size (never walked), and any character a write would refuse
    (bidi controls, invisible ones) as U+FFFD, so a message cannot hide what it says."""
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return f"an object of {len(value)} field{'s' if len(value) != 1 else ''}"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return cut(readable(text), limit)


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a text"
    return "a list" if isinstance(value, list) else "an object"


def _kinds_list(wanted: Any) -> list[str]:
    return [wanted] if isinstance(wanted, str) else list(wanted)


def _kinds(wanted: Any) -> str:
    return " or ".join(_KINDS.get(kind, kind) for kind in _kinds_list(wanted))


def _listed(values: Any) -> str:
    return ", ".join(value if isinstance(value, str) else shown(value) for value in values)


def schema_problem(validator: str, expected: Any, instance: Any, schema: dict[str, Any]) -> str:
    """What is wrong with one value, in words, from the keyword of the input schema it
    broke (``validator``, with its ``expected`` value) and the property's ``schema``; the
    field's own description, where it has one, says what to send."""
    hint = schema.get("description", "").rstrip(".")
    to_send = hint or "see the tool's description of this field"
    if validator == "type":
        if isinstance(instance, float) and "integer" in _kinds_list(expected):
            return f"must be {_kinds(expected)}, not {shown(instance)}"
        return f"must be {_kinds(expected)}, not {_json_kind(instance)}"
    if validator == "not" and expected == {"type": "null"}:
        return f"must not be null; {to_send}"
    if validator == "minLength":
        return "must not be empty" if expected == 1 else f"must be at least {expected} characters"
    if validator == "maxLength":
        return f"is {len(instance):,} characters; give at most {expected:,}"
    if validator == "minimum":
        return f"{shown(instance)} is too small; give at least {expected}"
    if validator == "maximum":
        return f"{shown(instance)} is too large; give at most {expected:,}"
    if validator == "minItems":
        return "must not be empty" if expected == 1 else f"must list at least {expected} items"
    if validator == "maxItems":
        return f"lists {len(instance)} items; give at most {expected}"
    if validator == "uniqueItems":
        return "lists the same item twice; give each once"
    if validator == "pattern" and isinstance(instance, str) and "\x00" in instance:
        return "must not contain NUL characters (U+0000)"
    if validator == "enum":
        return f"{shown(instance)} is not one of {_listed(expected)}"
    if validator == "const":
        return f"must be {shown(expected)}"
    return f"{shown(instance)} is not allowed here; {to_send}"
