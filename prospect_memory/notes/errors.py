"""The refusals of prospect memory's rules (SPEC section 7), one class per error code."""

from outreach.errors import BodyTooLarge, KitError, NotFound, ValidationFailed

__all__ = [
    "BodyTooLarge",
    "DailyLimitReached",
    "DomainNoteLimitReached",
    "InvalidDomain",
    "KitError",
    "NotFound",
    "NoteCountMismatch",
    "ValidationFailed",
]


class InvalidDomain(KitError):
    code = "invalid_domain"
    http_status = 400


class DailyLimitReached(KitError):
    code = "daily_limit_reached"
    http_status = 429


class DomainNoteLimitReached(KitError):
    code = "domain_note_limit_reached"
    http_status = 409


class NoteCountMismatch(KitError):
    code = "note_count_mismatch"
    http_status = 409
