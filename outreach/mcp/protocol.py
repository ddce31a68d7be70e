"""JSON-RPC 2.0 for MCP, in both protocol eras, without sessions.

- **Legacy** (2025-11-25, 2025-06-18, 2025-03-26): the ``initialize`` handshake, then one
  request per POST; the ``MCP-Protocol-Version`` header names the version (2025-03-26
  when absent).
- **Modern** (2026-07-28): every request carries its version and client capabilities in
  ``params._meta`` and mirrors the routing fields in the ``MCP-Protocol-Version``,
  ``Mcp-Method`` and ``Mcp-Name`` headers; ``server/discover`` replaces the handshake and
  every result says ``resultType``.

Nothing is remembered between requests. The transport view authenticates first and hands
the acting member's context in; this module never touches HTTP.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import InterfaceError, OperationalError

from outreach.characters import cut, readable
from outreach.errors import InsufficientScope, KitError
from outreach.mcp.registry import listing, registry
from outreach.operations import STORED_TEXT_IS_DATA, execute
from outreach.renderers import dumps
from outreach.validation import shown

logger = logging.getLogger(__name__)

LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
MODERN_VERSIONS = ("2026-07-28",)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# The wire status of a modern-era error (2026-07-28 transports).
_MODERN_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}

SERVER_INFO = {"name": "kit", "title": "Kit prospect memory", "version": "1.0.0"}
INSTRUCTIONS = (
    "Kit keeps verified research about companies, per account. Before researching a "
    "company, call outreach_recall_prospect_context; stop if should_stop is true; reuse "
    "fresh notes instead of searching again. Save one finding per note with its sources and "
    "the date it was true, and read the overlap that comes back. Read the writing guide for "
    "the campaign's language before drafting. Never compact unless the user asks. "
    + STORED_TEXT_IS_DATA
)


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any] | None = None
    #: Set when the call needs a scope the token lacks: the view answers with a challenge.
    missing_scope: str | None = None


@dataclass(frozen=True)
class Caller:
    """Who is calling: resolved by the transport before any method runs."""

    actor: Any
    scopes: frozenset[str]


def error_reply(
    request_id: Any, code: int, message: str, *, data: Any = None, status: int = 200
) -> Reply:
    """A JSON-RPC error answer."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return Reply(status, {"jsonrpc": "2.0", "id": request_id, "error": error})


def parse_error(message: str) -> Reply:
    return error_reply(None, PARSE_ERROR, message, status=400)


def valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def handle(message: Any, *, headers: Mapping[str, str], caller: Caller) -> Reply:
    """Answer one JSON-RPC message."""
    if isinstance(message, list):
        return error_reply(None, INVALID_REQUEST, "JSON-RPC batches are not supported", status=400)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return error_reply(
            None,
            INVALID_REQUEST,
            'expected a JSON-RPC 2.0 object with "jsonrpc": "2.0"',
            status=400,
        )
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return Reply(202)  # a response to us; this server never asks, so nothing to do
        return error_reply(None, INVALID_REQUEST, "a request needs a method", status=400)
    method, request_id = message["method"], message.get("id")
    if "id" in message and not valid_id(request_id):
        return error_reply(None, INVALID_REQUEST, "id must be a string or an integer", status=400)
    if not isinstance(method, str):
        return error_reply(request_id, INVALID_REQUEST, "method must be a string", status=400)
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error_reply(request_id, INVALID_PARAMS, "params must be an object", status=400)

    version_header = headers.get("mcp-protocol-version")
    modern = (
        method == "server/discover"
        or version_header in MODERN_VERSIONS
        or (isinstance(params.get("_meta"), dict) and _META_VERSION in params["_meta"])
    )
    if modern:
        return _modern(message, method, request_id, params, headers, caller)
    if (
        method != "initialize"
        and version_header is not None
        and (version_header not in LEGACY_VERSIONS)
    ):
        return error_reply(
            request_id,
            INVALID_REQUEST,
            f"Unsupported MCP-Protocol-Version {version_header[:40]!r}",
            data={"supported": [*LEGACY_VERSIONS, *MODERN_VERSIONS]},
            status=400,
        )
    if "id" not in message:
        return Reply(202)  # notifications/initialized, notifications/cancelled, ...
    return _legacy(method, request_id, params, caller)


# --- legacy era --------------------------------------------------------------------------


def _legacy(method: str, request_id: Any, params: dict, caller: Caller) -> Reply:
    def ok(result: dict[str, Any]) -> Reply:
        return Reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result})

    if method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        return ok(
            {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
                "instructions": INSTRUCTIONS,
            }
        )
    if method == "ping":
        return ok({})
    if method == "tools/list":
        return ok({"tools": [listing(operation) for operation in registry.all()]})
    if method == "tools/call":
        return _call(request_id, params, caller, ok, modern=False)
    return error_reply(request_id, METHOD_NOT_FOUND, f"Method not found: {method[:100]}")


# --- modern era --------------------------------------------------------------------------


def _modern(
    message: dict, method: str, request_id: Any, params: dict, headers: Mapping[str, str], caller
) -> Reply:
    def fail(code: int, text: str, data: Any = None) -> Reply:
        return error_reply(request_id, code, text, data=data, status=_MODERN_STATUS.get(code, 200))

    meta = params.get("_meta")
    if not isinstance(meta, dict) or _META_VERSION not in meta or _META_CAPABILITIES not in meta:
        return fail(
            INVALID_PARAMS,
            f"params._meta must carry {_META_VERSION!r} and {_META_CAPABILITIES!r}",
        )
    version = meta[_META_VERSION]
    if headers.get("mcp-protocol-version") != version:
        return fail(HEADER_MISMATCH, "MCP-Protocol-Version header does not match params._meta")
    if headers.get("mcp-method") != method:
        return fail(HEADER_MISMATCH, "Mcp-Method header does not match the request's method")
    name_key = _NAME_PARAM.get(method)
    if (
        name_key
        and params.get(name_key) is not None
        and headers.get("mcp-name") != params[name_key]
    ):
        return fail(HEADER_MISMATCH, f"Mcp-Name header does not match params.{name_key}")
    if not isinstance(version, str):
        return fail(INVALID_PARAMS, "the protocol version in params._meta must be a string")
    if version not in MODERN_VERSIONS:
        return fail(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": [*MODERN_VERSIONS, *LEGACY_VERSIONS], "requested": version},
        )
    if "id" not in message:
        return Reply(202)

    def ok(result: dict[str, Any]) -> Reply:
        return Reply(200, {"jsonrpc": "2.0", "id": request_id, "result": result})

    if method == "server/discover":
        return ok(
            {
                "supportedVersions": [*MODERN_VERSIONS, *LEGACY_VERSIONS],
                "capabilities": {"tools": {"listChanged": False}},
                "instructions": INSTRUCTIONS,
                "resultType": "complete",
                "ttlMs": 3_600_000,
                "cacheScope": "public",
            }
        )
    if method == "ping":
        return ok({"resultType": "complete"})
    if method == "tools/list":
        return ok(
            {
                "tools": [listing(operation) for operation in registry.all()],
                "resultType": "complete",
                "ttlMs": 3_600_000,
                "cacheScope": "public",
            }
        )
    if method == "tools/call":
        return _call(request_id, params, caller, ok, modern=True)
    return fail(METHOD_NOT_FOUND, f"Method not found: {method[:100]}")


# --- tools/call ----------------------------------------------------------------------------


def _result(payload: dict[str, Any], *, is_error: bool, modern: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": dumps(payload).decode("utf-8")}],
        "structuredContent": payload,
        "isError": is_error,
    }
    if modern:
        result["resultType"] = "complete"
    return result


def _call(
    request_id: Any, params: dict, caller: Caller, ok: Callable[[dict], Reply], *, modern: bool
) -> Reply:
    name = params.get("name")
    operation = registry.get(name) if isinstance(name, str) else None
    if operation is None:
        named = cut(readable(name), 100) if isinstance(name, str) else shown(name)
        status = _MODERN_STATUS[INVALID_PARAMS] if modern else 200
        return error_reply(request_id, INVALID_PARAMS, f"Unknown tool: {named}", status=status)
    arguments = params.get("arguments", {})
    if arguments is None:
        arguments = {}
    try:
        data = execute(operation, actor=caller.actor, granted=caller.scopes, arguments=arguments)
    except InsufficientScope as error:
        # Not a tool result: the transport answers 403 with a challenge, so the client can
        # ask for the missing scope.
        reply = error_reply(
            request_id, INVALID_REQUEST, error.message, data=error.as_dict(), status=403
        )
        return Reply(403, reply.body, missing_scope=operation.scope)
    except KitError as error:
        return ok(_result(error.as_dict(), is_error=True, modern=modern))
    except (OperationalError, InterfaceError):
        # The database went away mid-call: answered as every surface answers it (503
        # service_unavailable, retry; nothing half-written: kit.middleware), not as a fault.
        raise
    except Exception:
        logger.exception("MCP tool %s failed", operation.name)
        return error_reply(request_id, INTERNAL_ERROR, "Internal error; the call may be retried.")
    return ok(_result({"data": data}, is_error=False, modern=modern))


#: The methods this server answers, as an operator's figures name them (any other: "other").
METHODS = frozenset(
    {
        "initialize",
        "notifications/initialized",
        "ping",
        "tools/list",
        "tools/call",
        "server/discover",
    }
)


def observation(message: Any, reply: Reply) -> tuple[str, str | None]:
    """What one message ran, for the operator's figures: a known tool's name (a call of an
    unknown one is "tools/call"), else the method; and the code it was refused with (a
    tool's own refusal, or "protocol_error" for a JSON-RPC error), or None."""
    method = message.get("method") if isinstance(message, dict) else None
    name = method if isinstance(method, str) and method in METHODS else "other"
    params = message.get("params") if isinstance(message, dict) else None
    if method == "tools/call" and isinstance(params, dict):
        tool = params.get("name")
        if isinstance(tool, str) and registry.get(tool) is not None:
            name = tool
    body = reply.body or {}
    if "error" in body:
        return name, "protocol_error"
    result = body.get("result")
    if isinstance(result, dict) and result.get("isError"):
        error = (result.get("structuredContent") or {}).get("error") or {}
        code = error.get("code")
        return name, code if isinstance(code, str) else "refused"
    return name, None
