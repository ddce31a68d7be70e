"""The MCP transport: Streamable HTTP at /mcp, stateless, JSON responses only.

HTTP concerns live here (method, origin, content negotiation, size, authentication,
status codes and challenges); the JSON-RPC conversation is ``outreach.mcp.protocol``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from outreach.errors import Unauthenticated
from outreach.jsonbody import BadJSON, loads
from outreach.mcp import protocol
from outreach.oauth import (
    MCP_PATH,
    BearerGrant,
    authenticate_bearer,
    bearer_challenge,
    public_base_url,
)
from outreach.observed import observe
from outreach.renderers import dumps

MAX_BODY_BYTES = 256 * 1024


def _json(reply: protocol.Reply) -> HttpResponse:
    if reply.body is None:
        return HttpResponse(status=reply.status)
    return HttpResponse(dumps(reply.body), status=reply.status, content_type="application/json")


def _origin_allowed(request: HttpRequest, origin: str) -> bool:
    allowed = {public_base_url(request)} | set(settings.MCP_ALLOWED_ORIGINS)
    parts = urlsplit(origin)
    return f"{parts.scheme}://{parts.netloc}" in allowed


def _request_id(raw: bytes) -> Any:
    try:
        message = loads(raw)
    except BadJSON:
        return None
    if isinstance(message, dict) and protocol.valid_id(message.get("id")):
        return message["id"]
    return None


def _authenticated(request: HttpRequest, raw: bytes) -> BearerGrant | HttpResponse:
    """The request's grant, or the 401 that tells a client where to authorize (RFC 9728)."""
    try:
        return authenticate_bearer(request, resource_path=MCP_PATH)
    except Unauthenticated as error:
        reply = protocol.error_reply(
            _request_id(raw), protocol.INVALID_REQUEST, error.message, data=error.as_dict()
        )
        response = JsonResponse(reply.body, status=401)
        invalid = error.details.get("reason") != "missing_token"
        response["WWW-Authenticate"] = bearer_challenge(
            request,
            error="invalid_token" if invalid else "",
            description=error.message if invalid else "",
        )
        return response


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # Authentication first: a client that probes with GET (an SSE stream) or DELETE (a
        # session's end) without a token learns where to authorize, as with POST (SPEC 18).
        grant = _authenticated(request, b"")
        if isinstance(grant, HttpResponse):
            return grant
        refused = JsonResponse(
            {"error": "Kit's MCP endpoint takes JSON-RPC over POST only (no SSE stream)."},
            status=405,
        )
        refused["Allow"] = "POST"
        return refused
    origin = request.headers.get("Origin")
    if origin and not _origin_allowed(request, origin):
        return _json(
            protocol.error_reply(None, protocol.INVALID_REQUEST, "Origin not allowed", status=403)
        )
    content_type = request.content_type or ""
    if content_type != "application/json":
        return _json(
            protocol.error_reply(
                None,
                protocol.INVALID_REQUEST,
                "Content-Type must be application/json",
                status=415,
            )
        )
    accept = request.headers.get("Accept", "*/*")
    if not any(kind in accept for kind in ("application/json", "*/*", "application/*")):
        return _json(
            protocol.error_reply(
                None, protocol.INVALID_REQUEST, "Accept must allow application/json", status=406
            )
        )
    declared = (request.headers.get("Content-Length") or "0").strip()
    if not (declared.isascii() and declared.isdigit()):
        return _json(
            protocol.error_reply(
                None,
                protocol.INVALID_REQUEST,
                "Content-Length must be a whole number of bytes",
                status=400,
            )
        )
    length = int(declared)
    if length > MAX_BODY_BYTES:
        return _json(
            protocol.error_reply(
                None,
                protocol.INVALID_REQUEST,
                f"Request body is {length:,} bytes; the limit is {MAX_BODY_BYTES:,}",
                status=413,
            )
        )
    raw = request.body
    grant = _authenticated(request, raw)
    if isinstance(grant, HttpResponse):
        return grant

    try:
        message = loads(raw)
    except BadJSON as error:
        return _json(protocol.parse_error(f"Parse error: {error}"))

    headers = {key.lower(): value for key, value in request.headers.items()}
    caller = protocol.Caller(actor=grant.actor, scopes=grant.scopes)
    reply = protocol.handle(message, headers=headers, caller=caller)
    name, code = protocol.observation(message, reply)
    observe(request, name, code=code)
    response = _json(reply)
    if reply.missing_scope:
        response["WWW-Authenticate"] = bearer_challenge(
            request,
            error="insufficient_scope",
            description=f"This call needs the {reply.missing_scope} scope",
            scope=" ".join(sorted({*grant.scopes, reply.missing_scope})),
        )
    return response
