"""JSON rendering with orjson: recall answers carry up to 100 KB of notes on every call."""

from __future__ import annotations

import json

import orjson
from rest_framework.renderers import JSONRenderer


def dumps(value) -> bytes:
    try:
        return orjson.dumps(value, default=str)
    except (TypeError, orjson.JSONEncodeError):
        # orjson stops at 64-bit integers; an error may echo a bigger number it was sent.
        return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")


class FastJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return dumps(data)
