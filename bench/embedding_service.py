#!/usr/bin/env python
"""A local embedding service for ``bench/model_memory.py``: the default model behind
OpenAI's ``POST /v1/embeddings``, in one process, for Kit's OpenAI-compatible provider.

It runs the model exactly as Kit does in process (``local_model.runner``); the texts arrive
with the prefixes the provider adds (``query: ``, ``passage: ``), so a vector is the one Kit
would store. One request at a time (``wsgiref``): the service a benchmark measures, not a
product.

Run: ``.venv/bin/python bench/embedding_service.py PORT`` (prints ``ready`` once it serves).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prospect_memory.core.embeddings import local_model  # noqa: E402

MANIFEST = local_model.verified(local_model.Manifest.load(local_model.DEFAULT_MODEL_DIR))

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


def application(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    if environ["REQUEST_METHOD"] != "POST" or environ["PATH_INFO"] != "/v1/embeddings":
        start_response("404 Not Found", [("Content-Type", "application/json")])
        return [b'{"error": {"message": "not found"}}']
    length = int(environ.get("CONTENT_LENGTH") or 0)
    asked = json.loads(environ["wsgi.input"].read(length))
    texts = asked["input"] if isinstance(asked["input"], list) else [asked["input"]]
    vectors = local_model.runner(MANIFEST, 1).embed([str(text) for text in texts])
    body = json.dumps(
        {
            "object": "list",
            "model": MANIFEST.name,
            "data": [
                {"object": "embedding", "index": i, "embedding": vector}
                for i, vector in enumerate(vectors)
            ],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
    ).encode()
    start_response(
        "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
    )
    return [body]


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No line per request."""


def main(port: int) -> None:
    local_model.runner(MANIFEST, 1).session  # noqa: B018  (loaded before it serves)
    with make_server("127.0.0.1", port, application, handler_class=_Quiet) as server:
        print("ready", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]))
