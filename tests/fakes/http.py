"""The part every local stand-in for a remote API shares: a threaded HTTP server on
loopback that can be stopped (then connections are refused, as when a service is down),
JSON answers, and a record of the requests it was sent."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeApi:
    def __init__(self) -> None:
        self.mode = "ok"
        self.delay = 0.0
        self.requests: list[dict] = []
        self._server: ThreadingHTTPServer | None = None
        self._port = 0
        self._lock = threading.Lock()

    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                pass

            def do_POST(self):
                fake._handle(self)

        server = ThreadingHTTPServer(("127.0.0.1", self._port), Handler)
        server.daemon_threads = True
        self._port = server.server_address[1]
        self._server = server
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop listening: connections are refused, as when the service is down."""
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def _record(self, request: dict) -> None:
        with self._lock:
            self.requests.append(request)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    @staticmethod
    def _body(handler: BaseHTTPRequestHandler) -> bytes:
        return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))

    @staticmethod
    def _send(handler, status: int, payload: dict) -> None:
        FakeApi._send_raw(handler, status, json.dumps(payload).encode(), "application/json")

    @staticmethod
    def _send_raw(handler, status: int, data: bytes, content_type: str) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout)
