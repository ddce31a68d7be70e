"""Traces (SPEC 19): off and free without an OTLP endpoint (OpenTelemetry's SDK not even
imported); with one, a live server sends a span per request to the collector, named for its
route, carrying its path and never its query string. The collector is a local fake of the
OTLP/HTTP endpoint: the network edge, as the real one is out of reach here."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.live import ROOT, LiveServer


def test_without_an_endpoint_nothing_of_the_sdk_is_loaded(db):
    from django.db import connection

    from kit.db import database_url

    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("OTEL_") and key != "DJANGO_SETTINGS_MODULE"
    }
    env["DATABASE_URL"] = database_url(connection.settings_dict)
    probe = "import sys, kit.wsgi; print('opentelemetry.sdk' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False", done.stderr[-2000:]


class Collector:
    """An OTLP/HTTP trace endpoint on loopback that keeps what it is sent."""

    def __init__(self) -> None:
        bodies: list[bytes] = []
        self.bodies = bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self) -> list:
        found = []
        for body in self.bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    found.extend(scope.spans)
        return found


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_with_an_endpoint_each_request_is_a_span_without_its_query():
    from django.db import connection

    from kit.db import database_url

    collector = Collector()
    server = LiveServer(
        database_url(connection.settings_dict),
        workers=1,
        extra_env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_SERVICE_NAME": "kit-under-test",
        },
    )
    try:
        with urllib.request.urlopen(  # noqa: S310
            f"{server.url}/readyz?words=Pangolin-4412", timeout=30
        ) as answer:
            assert answer.status == 200
        deadline = time.monotonic() + 20
        while not any("readyz" in span.name for span in collector.spans()):
            assert time.monotonic() < deadline, [span.name for span in collector.spans()]
            time.sleep(0.2)
    finally:
        server.stop()
        collector.server.shutdown()
    span = next(span for span in collector.spans() if "readyz" in span.name)
    attributes = {item.key: item.value.string_value for item in span.attributes}
    addresses = {attributes.get(name) for name in ("http.target", "url.full", "http.url")}
    assert "/readyz" in addresses
    assert all(b"Pangolin" not in body for body in collector.bodies)
    assert any(b"kit-under-test" in body for body in collector.bodies)
