"""A local stand-in for an OpenAI-compatible embeddings server, at the HTTP edge.

It speaks the wire format of ``POST /v1/embeddings`` (what OpenAI, Ollama, TEI, vLLM and
LiteLLM answer) so the real ``openai`` SDK runs unchanged against it, and it can fail the
ways such servers do: 429, 503, 400, 401, slow answers, garbage, a wrong number of
vectors, vectors of the wrong size, or not listening at all.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler

from prospect_memory.core.embeddings import LocalProvider
from tests.fakes.http import FakeApi

API_KEY = "test-openai-key"
MODEL = "nomic-embed-text"
#: The size of the vectors the fake model returns when not asked for another.
NATIVE_DIMENSIONS = 256

_ERRORS = {
    "429": (429, "rate_limit_exceeded", "Rate limit reached."),
    "503": (503, "server_error", "The server is overloaded."),
    "500": (500, "server_error", "The server had an error."),
    "400": (400, "invalid_request_error", "This model does not support dimensions."),
    "401": (401, "invalid_api_key", "Incorrect API key provided."),
}


class FakeOpenAI(FakeApi):
    @property
    def texts(self) -> list[str]:
        with self._lock:
            return [text for request in self.requests for text in request["input"]]

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raw = self._body(handler)
        if handler.path != "/v1/embeddings":
            return self._send(handler, 404, {"error": {"message": "Not found"}})
        if handler.headers.get("Authorization") != f"Bearer {API_KEY}":
            return self._error(handler, "401")
        body = json.loads(raw)
        self._record(body)
        if self.delay:
            time.sleep(self.delay)
        mode = self.mode
        if mode in _ERRORS:
            return self._error(handler, mode)
        if mode == "garbage":
            return self._send_raw(handler, 200, b"<html>bad gateway</html>", "text/html")
        if body.get("model") != MODEL:
            return self._send(handler, 404, {"error": {"message": "model not found"}})
        texts = body["input"]
        dimensions = body.get("dimensions") or NATIVE_DIMENSIONS
        data = [
            {"object": "embedding", "index": i, "embedding": self._vector(text, dimensions)}
            for i, text in enumerate(texts)
        ]
        if mode == "wrong_count":
            data = data[:-1]
        if mode == "shuffled":  # servers may answer out of order; index says which is which
            data = list(reversed(data))
        if mode == "tiny":  # a vector too small to square in floating point
            data = [{**item, "embedding": [v * 1e-170 for v in item["embedding"]]} for item in data]
        if mode == "wrong_size":
            data = [{**item, "embedding": item["embedding"][:-1]} for item in data]
        return self._send(
            handler,
            200,
            {
                "object": "list",
                "data": data,
                "model": MODEL,
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    @staticmethod
    def _vector(text: str, dimensions: int) -> list[float]:
        # The local hashing embedding at the requested size, scaled so the client must
        # re-normalise it.
        provider = LocalProvider()
        provider.dimensions = dimensions
        return [2.0 * v for v in provider.embed_documents([text])[0]]

    def _error(self, handler, mode: str) -> None:
        status, kind, message = _ERRORS[mode]
        self._send(handler, status, {"error": {"message": message, "type": kind, "code": kind}})
