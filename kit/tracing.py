"""Traces (SPEC 19), with OpenTelemetry's own instrumentation of Django: on when an OTLP
endpoint is set (``OTEL_EXPORTER_OTLP_ENDPOINT``, or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``),
off otherwise, and then nothing of OpenTelemetry's SDK is even imported.

Each request is a span named for its route, sent in batches over OTLP/HTTP to the
collector the endpoint names (the standard ``OTEL_*`` variables tune it: the service's
name, the batch's delay, headers). A span carries the request's path, never its query
string: a search's words and an OAuth code stay out of the traces, as they stay out of
the logs.
"""

from __future__ import annotations

import os
from typing import Any


def endpoint() -> str:
    return os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT", ""
    )


def configure() -> bool:
    """Trace every request when an endpoint is set; before the WSGI application is built
    (the instrumentation adds its middleware to the settings'). Whether tracing is on."""
    if not endpoint():
        return False
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "kit")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(tracer_provider=provider, request_hook=_path_only)
    return True


#: The attributes that name the address a request reached, in both generations of the
#: HTTP semantic conventions.
_ADDRESSES = ("http.url", "http.target", "url.full")


def _path_only(span: Any, request: Any) -> None:
    """The request's address without its query string."""
    if not span.is_recording():
        return
    for name in _ADDRESSES:
        span.set_attribute(name, request.path)
    span.set_attribute("url.query", "")
