"""The REST adapter: each Kit operation served as an endpoint, with one error shape.

- OAuth2 bearer tokens (django-oauth-toolkit) issued for this API (RFC 8707 resource
  indicator naming ``/api``), bound to one account; or the web session of a signed-in
  member, acting in the account chosen in the account switcher (every scope).
- A view class serves one URL; each of its HTTP methods is one operation
  (``get = serve(RECALL, operation_id="recall")``). :func:`serve` builds the handler and its
  OpenAPI description from the operation, and the handler hands the call to
  ``outreach.operations.execute``, which checks scope, arguments, role and write budget
  exactly as the MCP adapter does.
- Every answer is ``{"data": ...}``; every error ``{"error": {"code", "message",
  "details"}}`` with an honest status.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.response import Response
from rest_framework.views import APIView

from outreach import scopes
from outreach.access import Actor
from outreach.errors import (
    BodyTooLarge,
    InsufficientScope,
    KitError,
    NotFound,
    Unauthenticated,
    ValidationFailed,
)
from outreach.guides import WRITING_GUIDE
from outreach.oauth import API_PATH, BearerGrant, authenticate_bearer, bearer_challenge
from outreach.observed import observe
from outreach.operations import Operation, execute, require_scope
from outreach.schema import ERROR_ENVELOPE
from outreach.selectors import member_for_request


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


class OperationApi(APIView):
    """Base of every Kit REST view: its methods are operations, see :func:`serve`."""

    authentication_classes = [KitOAuth2Authentication, SessionAuthentication]
    permission_classes: list = []

    def caller(self, request) -> tuple[Actor, frozenset[str]]:
        """The acting member and the scopes granted to this request."""
        grant = request.auth if isinstance(request.auth, BearerGrant) else None
        if grant is not None:
            return grant.actor, grant.scopes
        if request.user and request.user.is_authenticated:
            member = member_for_request(request)
            if member is None:
                raise Unauthenticated(
                    "You are signed in but not acting in any Kit account; pick one in the "
                    "account switcher.",
                    details={"reason": "no_account"},
                )
            return Actor.for_member(member), frozenset(scopes.ALL)
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

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        # The view keeps its answer (``self.response``) and sits in reference cycles with
        # the request, and DRF's answer names itself in its renderer's context, so an
        # answer's data (a recall's notes and pairs: 540 lists and dicts) waited for the
        # garbage collector. Once the server has sent it, both let go, and the data is
        # freed as soon as nothing else holds it.
        response._resource_closers.append(partial(self._answer_sent, response))
        return response

    def _answer_sent(self, response) -> None:
        vars(self).pop("response", None)
        response.renderer_context = None


# --- serving an operation --------------------------------------------------------------------

_ERROR_STATUSES = {
    400: "Invalid input",
    401: "Missing, invalid or expired credentials",
    403: "Not allowed",
    404: "Not found",
    409: "In conflict with what is stored",
    413: "Too large",
    429: "Over a limit (the answer says when to retry; Retry-After)",
}


def envelope(schema: dict) -> dict:
    return {
        "type": "object",
        "properties": {"data": schema},
        "required": ["data"],
        "additionalProperties": False,
    }


def _query_arguments(params, name: str, schema: dict) -> Any:
    """An argument from the query string: an array from each of its values (``?kinds=a&kinds=b``,
    or ``?kinds=a,b``), anything else from its one value (given twice, it is refused: a proxy
    reading the first and Kit the last would see two different requests)."""
    values = params.getlist(name)
    if schema.get("type") == "array":
        items = schema.get("items", {})
        return [_query_value(part, items) for value in values for part in value.split(",")]
    if len(values) > 1:
        raise ValidationFailed(
            f"{name} is given {len(values)} times; give it once.",
            details={"fields": {name: ["given more than once"]}},
        )
    return _query_value(values[0], schema)


def _query_value(value: str, schema: dict) -> Any:
    """A query string value in the type its schema asks for, when it reads as one."""
    kind = schema.get("type")
    if kind == "integer" and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"
    return value


class serve:  # lower case: it reads like a decorator, ``get = serve(RECALL, ...)``
    """Serve ``operation`` as this view's HTTP method of the attribute's name.

    ``get`` and ``delete`` read the arguments from the query string (the input schema's
    properties; others are ignored, as caches and tracking parameters add them); other
    methods from the JSON body. The URL's parameters named in ``path`` (``<str:note_id>``)
    are arguments too. The answer's status is ``status``, or 201 when ``created_when(data)``.
    """

    QUERY_METHODS = ("get", "delete")

    def __init__(
        self,
        operation: Operation,
        *,
        operation_id: str,
        status: int = 200,
        created_when: Callable[[dict], bool] | None = None,
        path: tuple[str, ...] = (),
    ) -> None:
        self.operation = operation
        self.operation_id = operation_id
        self.status = status
        self.created_when = created_when
        self.path = path
        properties = operation.input_schema.get("properties", {})
        #: The arguments that come from the query string or the body.
        self.fields = {name: spec for name, spec in properties.items() if name not in path}

    def __set_name__(self, owner: type[OperationApi], method: str) -> None:
        setattr(owner, method, self._handler(method))

    def _handler(self, method: str):
        operation, status, fields = self.operation, self.status, self.fields
        created_when = self.created_when

        def handler(view: OperationApi, request, **path):
            observe(request, self.operation_id)
            # Who is asking, and with which scopes, before the body is read.
            actor, granted = view.caller(request)
            require_scope(operation, granted)
            arguments: Any = dict(path)
            if method in self.QUERY_METHODS:
                arguments.update(
                    (name, _query_arguments(request.query_params, name, fields[name]))
                    for name in request.query_params
                    if name in fields
                )
            elif fields:
                body = request.data
                arguments = {**body, **path} if isinstance(body, dict) else body
            data = execute(operation, actor=actor, granted=granted, arguments=arguments)
            created = created_when is not None and created_when(data)
            return Response({"data": data}, status=201 if created else status)

        handler.__name__ = method
        handler.__doc__ = operation.title
        return extend_schema(**self._openapi(method))(handler)

    def _errors(self, method: str) -> dict[int, OpenApiResponse]:
        """The error answers of this method, by status, each naming its codes."""
        refusals = list(self.operation.refusal_classes())
        if method not in self.QUERY_METHODS and self.fields:
            refusals.append(BodyTooLarge)
        codes: dict[int, list[str]] = {}
        for refusal in refusals:
            if refusal.code not in codes.setdefault(refusal.http_status, []):
                codes[refusal.http_status].append(refusal.code)
        responses = {
            status: OpenApiResponse(
                ERROR_ENVELOPE, description=f"{_ERROR_STATUSES[status]}: {', '.join(codes[status])}"
            )
            for status in sorted(codes)
        }
        if method in self.QUERY_METHODS and self.fields:
            # Answered by the web server before Kit sees the request (gunicorn.conf.py).
            longest = settings.KIT_REQUEST_LINE_MAX_BYTES
            responses[414] = OpenApiResponse(
                description=f"The address is longer than the web server takes ({longest:,} "
                "bytes with the query string): shorten the query."
            )
        return responses

    def _openapi(self, method: str) -> dict:
        operation = self.operation
        schema = operation.input_schema
        required = [name for name in schema.get("required", ()) if name in self.fields]
        parameters, request = [], None
        if method in self.QUERY_METHODS:
            parameters = [
                OpenApiParameter(
                    name,
                    # The argument's own schema (type, enum, bounds), as the tools have it.
                    {k: v for k, v in spec.items() if k != "description"},
                    required=name in required,
                    description=spec.get("description", ""),
                )
                for name, spec in self.fields.items()
            ]
        elif self.fields:
            request = {
                "application/json": {**schema, "properties": self.fields, "required": required}
            }
        return {
            "operation_id": self.operation_id,
            "summary": operation.title,
            "description": operation.description,
            "parameters": parameters,
            "request": request,
            "responses": {
                self.status: envelope(operation.data_schema),
                **({201: envelope(operation.data_schema)} if self.created_when else {}),
                **self._errors(method),
            },
        }


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
            f"The request body is over {limit:,} bytes, the most Kit reads in one request.",
            details={"limit_bytes": limit},
        )
    if isinstance(exc, KitError):
        observe(request, code=exc.code)
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
            observe(request, code=code)
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
    when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return max(int((when - timezone.now()).total_seconds()) + 1, 1)


@csrf_exempt  # an unknown path answers 404 in the API's shape, whatever the method or cookie
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
                    "scopes": dict(scopes.DESCRIPTIONS),
                }
            },
        }


class WritingGuideApi(OperationApi):
    get = serve(WRITING_GUIDE, operation_id="writing_guide", path=("locale",))
