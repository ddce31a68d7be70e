"""What one request did, in words an operator's figures can hold: the operation or protocol
method it ran and, for a refusal, its error code. The adapters say it (the MCP endpoint
for a tool call, ``serve`` for a REST route); the project's metrics read it from the
request once the answer is made. Neither a name nor a code ever carries account data or
text: names come from the registry and the routes, codes from the error classes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Observed:
    #: The MCP tool, the JSON-RPC method or the REST operation the request ran (None: the
    #: route's name says it).
    name: str | None
    #: The ``KitError`` code it was refused with (None: answered).
    code: str | None = None


def observe(request: Any, name: str | None = None, *, code: str | None = None) -> None:
    """Say what ``request`` (Django's, or DRF's around it) ran, or how it was refused."""
    target = getattr(request, "_request", request)
    found: Observed | None = getattr(target, "observed", None)
    if name is not None:
        found = replace(found, name=name) if found else Observed(name)
    if code is not None:
        found = replace(found, code=code) if found else Observed(None, code)
    target.observed = found


def observed(request: Any) -> Observed | None:
    return getattr(getattr(request, "_request", request), "observed", None)
