"""A local stand-in for Google's embedding API, at the HTTP edge.

It speaks the wire format google-genai uses (``POST /v1beta/models/<model>:batchEmbedContents``)
so the real SDK runs unchanged against it, and it can be told to fail the ways the real
service does: 429, 503, 400, slow answers, garbage, a wrong number of vectors, or not
listening at all.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

from prospect_memory.core.embeddings import LocalProvider
from tests.fakes.http import FakeApi

API_KEY = "test-gemini-key"

_ERRORS = {
    "429": (429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    "503": (503, "UNAVAILABLE", "The service is currently unavailable."),
    "500": (500, "INTERNAL", "Internal error encountered."),
    "400": (400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
    "401": (401, "UNAUTHENTICATED", "API key not valid."),
}


class FakeGemini(FakeApi):
    @property
    def texts(self) -> list[str]:
        with self._lock:
            return [r["content"]["parts"][0]["text"] for b in self.requests for r in b["requests"]]

    # -- behaviour ------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = self._body(handler)
        if not handler.path.endswith(":batchEmbedContents"):
            return self._send(handler, 404, {"error": {"code": 404, "status": "NOT_FOUND"}})
        if handler.headers.get("x-goog-api-key") != API_KEY:
            return self._error(handler, "401")
        body = json.loads(raw)
        self._record({"path": handler.path, **body})
        mode = self.mode
        if self.delay:
            time.sleep(self.delay)
        if mode in _ERRORS:
            return self._error(handler, mode)
        if mode == "garbage":
            return self._send_raw(handler, 200, b"<html>upstream proxy error</html>", "text/html")
        if mode == "bad_json_shape":
            return self._send(handler, 200, {"embeddings": [{"values": "nope"}]})
        requests = body["requests"]
        if len(requests) > 100:
            return self._error(handler, "400")
        embeddings = [{"values": self._vector(r)} for r in requests]
        if mode == "wrong_count":
            embeddings = embeddings[:-1]
        return self._send(handler, 200, {"embeddings": embeddings})

    @staticmethod
    def _vector(request: dict) -> list[float]:
        # Deterministic and meaningful enough for overlap: the local hashing embedding at
        # the requested size, scaled so the client must re-normalise it.
        provider = LocalProvider()
        provider.dimensions = request.get("outputDimensionality") or 3072
        text = request["content"]["parts"][0]["text"]
        return [3.0 * v for v in provider.embed_documents([text])[0]]

    def _error(self, handler, mode: str) -> None:
        code, status, message = _ERRORS[mode]
        self._send(handler, code, {"error": {"code": code, "message": message, "status": status}})
