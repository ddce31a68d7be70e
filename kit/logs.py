"""Log lines an operator's tools read (SPEC 19): one JSON object a line, each naming the
request it was written for.

Every request gets an id (:class:`RequestIdMiddleware`): the one a proxy in front sends in
``X-Request-ID`` when there is one (``KIT_PROXY_COUNT``) and it is one Kit can carry (up
to 128 letters, digits and ``._:-``), else a new one (a client's own is not trusted). The
answer carries it back in ``X-Request-ID``, and every line logged while the request is
answered names it (``request_id``). gunicorn's access lines name it too
(``gunicorn.conf.py``), and leave the query string out: a search's words are not logged,
and neither are they in the lines Django writes of refused answers (their request is
written as its method and path).

What Kit logs never holds a token, a secret or stored text: messages name operations,
paths, models and error classes (``tests/kit/test_logs.py`` greps a live server's log for
every token, text and key the test used).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

#: The id of the request being answered in this thread, if any.
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

#: An id sent by a proxy that Kit carries as it is.
_CARRIED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


class RequestIdMiddleware:
    """Gives every request an id, and its answer the same id in ``X-Request-ID``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        sent = request.headers.get("X-Request-ID", "") if settings.KIT_PROXY_COUNT else ""
        given = sent if _CARRIED.fullmatch(sent) else uuid.uuid4().hex
        # Kept until the answer is sent (``request_finished``): Django logs a refused
        # answer after the middleware has returned it.
        request_id.set(given)
        response = self.get_response(request)
        response["X-Request-ID"] = given
        return response


def _answered(**_: Any) -> None:
    request_id.set(None)


request_finished.connect(_answered, dispatch_uid="kit-request-id")


class JsonFormatter(_JsonFormatter):
    """``{"time", "level", "logger", "message", "request_id", ...}``, one line a record
    (a traceback in ``exc_info``)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(
            "%(levelname)s %(name)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger"},
            timestamp="time",  # ISO 8601, UTC
            **options,
        )

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        super().add_fields(log_data, record, message_dict)
        # Django attaches the request to the lines it logs of refused answers: its text is
        # the whole address, query string and all (a search's words, a token sent in the
        # wrong place). Only its method and path are written.
        request = log_data.pop("request", None)
        if request is not None:
            path = getattr(request, "path", None)
            log_data["request"] = f"{getattr(request, 'method', '')} {path}" if path else None
        log_data["request_id"] = request_id.get()
