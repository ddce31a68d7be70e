"""The refusals business memory adds to SPEC section 7."""

from outreach.errors import KitError, NotFound, ValidationFailed

__all__ = [
    "IntegrityHold",
    "KeyTaken",
    "MergeTypeMismatch",
    "NotFound",
    "ValidationFailed",
    "ValueTooLarge",
    "VersionMismatch",
]


class ValueTooLarge(KitError):
    code = "value_too_large"
    http_status = 413


class MergeTypeMismatch(KitError):
    code = "merge_type_mismatch"
    http_status = 409


class VersionMismatch(KitError):
    code = "version_mismatch"
    http_status = 409


class KeyTaken(KitError):
    code = "key_taken"
    http_status = 409


class IntegrityHold(KitError):
    """A flagged value would replace an account entry a person wrote (SPEC 15)."""

    code = "integrity_hold"
    http_status = 409
