"""Reading JSON request bodies strictly, so odd input is a clear 400, never a 500.

Three things the standard parser lets through or trips over: nesting deeper than
``KIT_JSON_MAX_DEPTH`` (deep enough, it exhausts the recursion limit of every later reader:
validation, wording, storage), escaped lone surrogates (``"\\ud800"``), which decode to strings that
can never be encoded back to UTF-8, stored or answered, and ``NaN`` and ``Infinity``, which
are not JSON.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BadJSON(ValueError):
    pass


def _has_lone_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def depth(value: Any) -> int:
    """How many arrays and objects deep ``value`` is (a scalar is 1), without recursion."""
    stack, deepest = [(value, 1)], 0
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((inner, level + 1) for inner in item.values())
        elif isinstance(item, list):
            stack.extend((inner, level + 1) for inner in item)
    return deepest


def _not_json(constant: str):
    raise BadJSON(f"{constant} is not a JSON number; send a finite number")


def loads(raw: bytes | str) -> Any:
    try:
        value = json.loads(raw, parse_constant=_not_json)
    except RecursionError:
        raise BadJSON("the JSON is nested too deeply") from None
    except BadJSON:
        raise
    except (ValueError, UnicodeDecodeError) as error:
        raise BadJSON(f"the body is not valid JSON ({str(error)[:120]})") from None
    try:
        surrogate = _has_lone_surrogate(value)
    except RecursionError:
        raise BadJSON("the JSON is nested too deeply") from None
    if surrogate:
        raise BadJSON("the JSON contains an invalid Unicode escape (a lone surrogate)")
    most = settings.KIT_JSON_MAX_DEPTH
    if depth(value) > most:
        raise BadJSON(f"the JSON is nested more than {most} levels deep")
    return value


class StrictJSONParser(JSONParser):
    """DRF's JSON parser with :func:`loads`' checks."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            return loads(raw)
        except BadJSON as error:
            raise ParseError(f"JSON parse error: {error}") from None
