"""Kit's one error shape: ``{"error": {"code", "message", "details"}}``.

Every refusal any interface gives (MCP tool, REST view) is a :class:`KitError` with a stable
code, a message that says what to do next, and details for programs.
"""

from __future__ import annotations

from typing import Any


class KitError(Exception):
    code: str = "error"
    http_status: int = 400

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def as_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


class Unauthenticated(KitError):
    code = "unauthenticated"
    http_status = 401


class InsufficientScope(KitError):
    code = "insufficient_scope"
    http_status = 403


class NotModuleAdmin(KitError):
    code = "not_module_admin"
    http_status = 403


class PersonRequired(KitError):
    """A decision only a person makes (clearing integrity flags): not through an agent's
    OAuth token."""

    code = "person_required"
    http_status = 403


class AddonRequired(KitError):
    code = "addon_required"
    http_status = 403


class SubscriptionInactive(KitError):
    code = "subscription_inactive"
    http_status = 403


class AccountClosed(KitError):
    """The account left Kit: it can still be read and exported until it is erased, not
    written."""

    code = "account_closed"
    http_status = 403


class NotFound(KitError):
    code = "not_found"
    http_status = 404


class BodyTooLarge(KitError):
    code = "body_too_large"
    http_status = 413


class ValidationFailed(KitError):
    code = "validation_error"
    http_status = 400
