"""JSON rendering with orjson: recall answers carry up to 100 KB of notes on every call."""

from __future__ import annotations

import orjson
from rest_framework.renderers import JSONRenderer


def dumps(value) -> bytes:
    return orjson.dumps(value, default=str)


class FastJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return dumps(data)
