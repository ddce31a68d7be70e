"""When the database connection drops mid-request, answer a clear, retryable 503."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError, close_old_connections
from django.http import JsonResponse

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        logger.warning(
            "database unavailable during %s %s: %s",
            request.method,
            request.path,
            type(exception).__name__,
        )
        # Drop the broken connection so the next request opens a fresh one.
        close_old_connections()
        response = JsonResponse(
            {
                "error": {
                    "code": "service_unavailable",
                    "message": "Kit lost its database connection while answering; nothing was "
                    "half-written. Retry the request.",
                    "details": {},
                }
            },
            status=503,
        )
        response["Retry-After"] = "1"
        return response
