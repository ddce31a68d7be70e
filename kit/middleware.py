"""Answers Kit gives before or instead of a view: NUL bytes refused, a database lost or
too slow a 503; what every answer to a signed-in person or a token carries: no caching;
and the work a request leaves for after its answer."""

from __future__ import annotations

import logging

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.core.exceptions import TooManyFieldsSent
from django.core.handlers.wsgi import WSGIRequest
from django.core.signals import setting_changed
from django.db import InterfaceError, OperationalError, close_old_connections
from django.http import JsonResponse
from django.utils.functional import SimpleLazyObject, empty

from outreach import after_answer

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        cause = type(exception.__cause__).__name__
        logger.warning(
            "database unavailable during %s %s: %s (%s)",
            request.method,
            request.path,
            type(exception).__name__,
            cause,
        )
        # Drop the broken connection so the next request opens a fresh one.
        close_old_connections()
        if cause in _TOO_SLOW:
            what = "Kit's database did not answer in time"
        else:
            what = "Kit lost its database connection while answering"
        response = JsonResponse(
            {
                "error": {
                    "code": "service_unavailable",
                    "message": f"{what}; nothing was half-written. Retry the request.",
                    "details": {},
                }
            },
            status=503,
        )
        response["Retry-After"] = "1"
        return response


#: psycopg's errors for a statement or a lock wait cut short by a time limit (an operator's
#: ``statement_timeout`` or ``lock_timeout``): the connection is fine, the answer was late.
_TOO_SLOW = {"QueryCanceled", "LockNotAvailable"}


class RejectNulBytesMiddleware:
    """A NUL byte in the address, a query string or a form field is a 400 before any view
    reads it, as is a query string or form of more fields than Django reads.

    PostgreSQL cannot store NUL in text, so such a value would otherwise fail deep inside a
    query (the OAuth endpoints look clients and codes up by the values they are sent).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path:
            return self._refusal(request, "(address)", "The address contains a NUL byte")
        try:
            fields = [request.GET]
            if request.content_type in (
                "application/x-www-form-urlencoded",
                "multipart/form-data",
            ):
                fields.append(request.POST)
        except TooManyFieldsSent:
            most = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
            return self._refusal(request, "(fields)", f"The request has over {most:,} fields")
        for data in fields:
            for key, values in data.lists():
                if "\x00" in key or any("\x00" in value for value in values):
                    return self._refusal(
                        request, key, f"The field {key[:40]!r} contains a NUL byte"
                    )
        return self.get_response(request)

    @staticmethod
    def _refusal(request, field: str, problem: str) -> JsonResponse:
        message = f"{problem}; remove it and try again."
        if request.path.startswith(("/o/", "/.well-known/")):
            # OAuth endpoints answer in RFC 6749's error shape.
            body = {"error": "invalid_request", "error_description": message}
        else:
            details = {"fields": {field[:40]: [problem]}}
            body = {"error": {"code": "validation_error", "message": message, "details": details}}
        return JsonResponse(body, status=400)


class AfterAnswerMiddleware:
    """Work a request leaves for after its answer (``outreach.after_answer``) runs once the
    server has written the response: collected for a WSGI request, whose response closes
    in the thread that made it (gunicorn writes the body, then closes it)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not isinstance(request, WSGIRequest):
            return self.get_response(request)
        after_answer.collect()
        try:
            return self.get_response(request)
        finally:
            after_answer.answered()


class PrivateAnswersMiddleware:
    """Answers to a signed-in person or a bearer token are never stored by a browser or a
    proxy: they show decrypted notes and a member's own context, which a shared computer's
    back button or cache must not show to the next person after sign-out.

    A view that says how its answer may be cached keeps its own header.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.has_header("Cache-Control"):
            return response
        user = getattr(request, "user", None)
        if "HTTP_AUTHORIZATION" in request.META or (user is not None and user.is_authenticated):
            response["Cache-Control"] = "private, no-store"  # as patch_cache_control writes it
        return response


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, with the policy of the settings built once.

    django-csp builds both headers from settings on every answer (a dataclass copied and
    every directive joined, twice): this subclass saved 3.05% of a REST recall's
    instructions in the web process (callgrind). Kit's policy is its settings' alone unless a view
    changes it (django-csp's decorators) or a template asks for a nonce; such an answer
    is built by django-csp itself, and every other gets the headers it would have built.
    """

    def process_response(self, request, response):
        if getattr(request, "_csp_nonce", None) is not None or any(
            hasattr(response, name) for name in _A_VIEWS_POLICY
        ):
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response
        for header, exempt, policy, excluded in _settings_policies():
            if (
                policy
                and header not in response
                and not getattr(response, exempt, False)
                and not request.path_info.startswith(excluded)
            ):
                response[header] = policy
        request.csp_nonce = _NO_NONCE_AFTER_THE_HEADER
        return response


#: What django-csp's decorators leave on an answer whose view sets its own policy.
_A_VIEWS_POLICY = tuple(
    f"_csp_{part}{kind}" for part in ("config", "update", "replace") for kind in ("", "_ro")
)
#: A template that asks for a nonce once the header is written gets django-csp's error.
_NO_NONCE_AFTER_THE_HEADER = CheckableLazyObject(CSPMiddleware._csp_nonce_post_response)
_Policies = tuple[tuple[str, str, str, tuple[str, ...]], ...]
_built: _Policies = ()


def _settings_policies() -> _Policies:
    """For each header, enforced then report-only: its name, the attribute that exempts an
    answer, the policy of the settings, and the paths it is not sent on. Built whole, then
    kept in one assignment: a thread never sees half of it."""
    global _built
    built = _built
    if not built:
        made = []
        for header, exempt, setting, report_only in (
            (HEADER, "_csp_exempt", "CONTENT_SECURITY_POLICY", False),
            (HEADER_REPORT_ONLY, "_csp_exempt_ro", "CONTENT_SECURITY_POLICY_REPORT_ONLY", True),
        ):
            excluded = (getattr(settings, setting, None) or {}).get("EXCLUDE_URL_PREFIXES")
            policy = build_policy(report_only=report_only)
            made.append((header, exempt, policy, tuple(excluded or ())))
        built = _built = tuple(made)
    return built


def _forget_policies(*, setting, **_) -> None:
    global _built
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        _built = ()


setting_changed.connect(_forget_policies, dispatch_uid="kit-csp-policies")


class MessagesMiddleware(MessageMiddleware):
    """Django's messages, with a request's storage made when a message is added or read.

    An API or MCP request never does, and making the storage (a cookie storage and a
    session storage) on every request was 0.8% of a REST recall's instructions. Storage
    never made has nothing to store: Django's ``update`` would return at once."""

    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        made = getattr(request, "_messages", None)
        if isinstance(made, SimpleLazyObject) and made._wrapped is empty:
            return response
        return super().process_response(request, response)
