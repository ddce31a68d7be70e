"""What every Kit REST view shares: authentication, the acting member, scopes, one error shape.

- OAuth2 bearer tokens (django-oauth-toolkit) issued for this API (RFC 8707 resource
  indicator naming ``/api``), bound to one account; or the web session of a signed-in
  member, acting in the account chosen in the account switcher.
- Each view declares the scope it needs (``required_scope``), as MCP tools do.
- Every error is ``{"error": {"code", "message", "details"}}`` with an honest status.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.response import Response
from rest_framework.views import APIView

from outreach.access import MEMBER, Actor, require_role
from outreach.errors import (
    BodyTooLarge,
    InsufficientScope,
    KitError,
    NotFound,
    Unauthenticated,
)
from outreach.guides import writing_guide
from outreach.mcp.registry import READ, WRITE
from outreach.mcp_tools import GUIDE_DATA
from outreach.oauth import API_PATH, BearerGrant, authenticate_bearer, bearer_challenge
from outreach.ratelimit import write_allowed
from outreach.selectors import member_for_session

SESSION_ACCOUNT_KEY = "kit_account"


class KitOAuth2Authentication(BaseAuthentication):
    """Bearer tokens for this API only, bound to an account; challenges name the metadata."""

    def authenticate(self, request):
        if not request.headers.get("Authorization", "").startswith("Bearer "):
            return None  # not a bearer request: the session may authenticate it
        try:
            grant = authenticate_bearer(request, resource_path=API_PATH)
        except Unauthenticated as error:
            raise exceptions.AuthenticationFailed(error.message) from None
        return grant.actor.member.user, grant

    def authenticate_header(self, request):
        return bearer_challenge(request, resource_path=API_PATH)


class KitApiView(APIView):
    """Base of every Kit REST view."""

    authentication_classes = [KitOAuth2Authentication, SessionAuthentication]
    permission_classes: list = []
    required_scope: str = READ
    #: Who may call it (``outreach.access.MEMBER`` or ``MODULE_ADMIN``).
    required_role: str = MEMBER

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.actor = self._actor(request)
        # A write counts against the budget only once it may be made at all.
        require_role(self.actor, self.required_role)
        if self.required_scope == WRITE:
            write_allowed(self.actor)

    def _actor(self, request) -> Actor:
        grant = request.auth if isinstance(request.auth, BearerGrant) else None
        if grant is not None:
            if self.required_scope not in grant.scopes:
                raise InsufficientScope(
                    f"This needs the {self.required_scope} scope, which the token lacks. "
                    f"Authorize again with {self.required_scope}.",
                    details={"required_scope": self.required_scope},
                )
            return grant.actor
        if request.user and request.user.is_authenticated:
            member = member_for_session(
                user=request.user, account_slug=request.session.get(SESSION_ACCOUNT_KEY)
            )
            if member is None:
                raise Unauthenticated(
                    "You are signed in but not acting in any Kit account; pick one in the "
                    "account switcher.",
                    details={"reason": "no_account"},
                )
            return Actor.for_member(member)
        raise Unauthenticated(
            "Sign in first: send 'Authorization: Bearer <token>' with an OAuth access token "
            "for this API, or use a signed-in web session.",
            details={"reason": "missing_token"},
        )

    def handle_exception(self, exc):
        response = error_response(self.request, exc)
        if response is None:
            return super().handle_exception(exc)
        return response


_DRF_ERRORS: dict[type, tuple[str, int]] = {
    exceptions.NotAuthenticated: ("unauthenticated", 401),
    exceptions.AuthenticationFailed: ("unauthenticated", 401),
    exceptions.PermissionDenied: ("forbidden", 403),
    exceptions.NotFound: ("not_found", 404),
    exceptions.MethodNotAllowed: ("method_not_allowed", 405),
    exceptions.NotAcceptable: ("not_acceptable", 406),
    exceptions.UnsupportedMediaType: ("unsupported_media_type", 415),
    exceptions.ParseError: ("validation_error", 400),
    exceptions.ValidationError: ("validation_error", 400),
    exceptions.Throttled: ("rate_limited", 429),
}


def error_response(request, exc: Exception) -> Response | None:
    """The envelope for ``exc``, or None for an unexpected error (a bug: DRF's 500)."""
    headers: dict[str, str] = {}
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = BodyTooLarge(
            f"The request body is over {limit:,} bytes. A note body may be at most 10 KB.",
            details={"limit_bytes": limit},
        )
    if isinstance(exc, KitError):
        body, status = exc.as_dict(), exc.http_status
        if isinstance(exc, Unauthenticated):
            headers["WWW-Authenticate"] = bearer_challenge(request, resource_path=API_PATH)
        elif isinstance(exc, InsufficientScope):
            headers["WWW-Authenticate"] = bearer_challenge(
                request,
                resource_path=API_PATH,
                error="insufficient_scope",
                scope=exc.details.get("required_scope", ""),
            )
        elif "resets_at" in exc.details:
            headers["Retry-After"] = str(_seconds_until(exc.details["resets_at"]))
        elif "retry_after_seconds" in exc.details:
            headers["Retry-After"] = str(exc.details["retry_after_seconds"])
        return Response(body, status=status, headers=headers)
    for kind, (code, status) in _DRF_ERRORS.items():
        if isinstance(exc, kind):
            details: dict[str, Any] = {}
            if isinstance(exc, exceptions.ValidationError):
                details = {"fields": exc.detail}
                message = "The request is not valid; see details."
            else:
                message = str(exc.detail)
            if status == 401:
                headers["WWW-Authenticate"] = bearer_challenge(
                    request,
                    resource_path=API_PATH,
                    error="invalid_token" if request.headers.get("Authorization") else "",
                )
            if isinstance(exc, exceptions.Throttled) and exc.wait:
                headers["Retry-After"] = str(int(exc.wait) + 1)
            return Response(
                {"error": {"code": code, "message": message, "details": details}},
                status=status,
                headers=headers,
            )
    return None


def _seconds_until(moment: str) -> int:
    from datetime import datetime

    from django.utils import timezone

    when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return max(int((when - timezone.now()).total_seconds()) + 1, 1)


def api_not_found(request, *args, **kwargs):
    """Unknown paths under /api/ answer in the API's error shape, not an HTML page."""
    error = NotFound(
        f"No API endpoint at {request.path}. The API is described at /api/schema/ "
        "and browsable at /api/docs/.",
        details={"path": request.path},
    )
    return JsonResponse(error.as_dict(), status=404)


class KitOAuth2Scheme(OpenApiAuthenticationExtension):
    target_class = KitOAuth2Authentication
    name = "oauth2"

    def get_security_definition(self, auto_schema):
        return {
            "type": "oauth2",
            "description": "Authorization code with PKCE (S256). Request the token with "
            "resource=<origin>/api (RFC 8707); it acts for the account chosen at consent.",
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "/o/authorize/",
                    "tokenUrl": "/o/token/",
                    "refreshUrl": "/o/token/",
                    "scopes": {
                        "outreach_read": "Read prospect research, relationships and guides",
                        "outreach_write": "Save and compact prospect research",
                    },
                }
            },
        }


class WritingGuideApi(KitApiView):
    """Kit's writing guide for one of the five campaign languages."""

    required_scope = READ

    @extend_schema(
        operation_id="writing_guide",
        summary="Get Kit's writing guide for a language (en, de, fr, es, pl)",
        responses={
            200: {
                "type": "object",
                "properties": {"data": GUIDE_DATA},
                "required": ["data"],
            },
            400: OpenApiResponse(description="Unknown locale (validation_error)"),
            401: OpenApiResponse(description="unauthenticated"),
            403: OpenApiResponse(description="insufficient_scope, addon_required, ..."),
        },
    )
    def get(self, request, locale: str):
        from outreach.access import require_outreach

        require_outreach(self.actor)
        return Response({"data": writing_guide(locale).as_data()})
