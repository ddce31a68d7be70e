"""What is wrong with what a caller sent, in one wording for every operation.

Each problem begins with the field it is about and says what to send instead ("limit must
be a whole number from 1 to 20"; a schema problem: "limit: 5000 is greater than the
maximum of 20"). A call's problems are collected by field and reported together: the
error's message is the first problem (with how many more there are), its details every
problem by field. The checks of ``operations.execute`` (the input schema) and each app's
own rules report through it alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

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
