"""The operator's figures (SPEC 19): ``GET /metrics`` in Prometheus' text format, with the
maintained client library (``prometheus-client``).

Counted as requests are answered (:class:`MetricsMiddleware`): every MCP tool and method,
REST operation and page, by outcome, and how long each took. Read from the database when
scraped (:class:`DatabaseCollector`, reused for a while): the embedding queue, the
re-embedding's progress and the flagged rows, across every account.

No label carries account data or text: a request's name is a registered tool, a JSON-RPC
method, a REST operation or a route's name (``"unmatched"`` for an address no route
serves), an outcome one of four words, a memory's rows their model (``prospect_memory.note``).

Several worker processes (gunicorn) each count their own requests; with
``PROMETHEUS_MULTIPROC_DIR`` set (``gunicorn.conf.py`` sets it) each writes its figures to
a file there and a scrape adds them up, whichever worker answers it.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db import Error as DatabaseFailure
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from outreach import after_answer
from outreach.observed import observed
from outreach.ratelimit import RateLimited
from prospect_memory.business.errors import IntegrityHold
from prospect_memory.notes.errors import DailyLimitReached

if TYPE_CHECKING:
    from prospect_memory.core.embedding_pipeline import Backlog

logger = logging.getLogger(__name__)

#: How each request ended: answered, refused (a 4xx, or a tool's refusal), refused by a
#: rate limit, or failed (a 5xx).
OUTCOMES = ("ok", "refused", "rate_limited", "error")

#: The buckets of the histograms of seconds: 1 ms to 10 s.
SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)

REQUESTS = Counter(
    "kit_requests",
    "Requests answered, by surface (mcp, rest, page, oauth), name and outcome.",
    ["surface", "name", "outcome"],
)
LATENCY = Histogram(
    "kit_request_seconds",
    "Time to answer a request, by surface and name.",
    ["surface", "name"],
    buckets=SECONDS,
)
RATE_LIMITED = Counter(
    "kit_rate_limit_refusals",
    "Requests refused by a rate limit or a budget, by surface.",
    ["surface"],
)
INTEGRITY_HOLDS = Counter(
    "kit_integrity_holds",
    "Writes held because the text they bring reads as instructions (SPEC 15).",
)
AFTER_ANSWER = Histogram(
    "kit_after_answer_seconds",
    "Time a web worker spent after answering a request, on work it left (an embedding).",
    buckets=SECONDS,
)


@receiver(after_answer.worked, dispatch_uid="kit.metrics.after_answer")
def _count_after_answer(sender: object, seconds: float, **kwargs: object) -> None:
    AFTER_ANSWER.observe(seconds)


#: Codes that are a rate limit or a budget reached, not a refusal of what was asked.
_LIMIT_CODES = frozenset({RateLimited.code, DailyLimitReached.code})
#: Paths no figure is kept of: files.
_UNCOUNTED = ("/static/",)


def surface_of(path: str) -> str:
    if path == "/mcp" or path.startswith("/mcp/"):
        return "mcp"
    if path.startswith("/api/"):
        return "rest"
    if path.startswith("/o/") or path.startswith("/.well-known/"):
        return "oauth"
    return "page"


def outcome_of(status: int, code: str | None) -> str:
    if code in _LIMIT_CODES or status == 429:
        return "rate_limited"
    if status >= 500:
        return "error"
    if code is not None or status >= 400:
        return "refused"
    return "ok"


class MetricsMiddleware:
    """Counts and times every answer; outermost, so it sees what every other part did."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(_UNCOUNTED):
            return self.get_response(request)
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        try:
            self._count(request, response, elapsed)
        except Exception:  # a figure lost never costs the answer (its storage gone, say)
            if not self.failed:
                logger.exception("could not count a request for /metrics; counting goes on")
            self.failed = True
        return response

    failed = False

    def _count(self, request: HttpRequest, response: HttpResponse, elapsed: float) -> None:
        surface = surface_of(request.path)
        seen = observed(request)
        match = request.resolver_match
        name = (seen.name if seen else None) or (match.url_name if match else None) or "unmatched"
        code = seen.code if seen else None
        outcome = outcome_of(response.status_code, code)
        REQUESTS.labels(surface, name, outcome).inc()
        LATENCY.labels(surface, name).observe(elapsed)
        if outcome == "rate_limited":
            RATE_LIMITED.labels(surface).inc()
        if code == IntegrityHold.code:
            INTEGRITY_HOLDS.inc()


@dataclass(frozen=True)
class DatabaseFigures:
    """What the database says, across every account: each embedded model's
    :class:`~prospect_memory.core.embedding_pipeline.Backlog`, the flagged rows per model,
    and when they were read."""

    backlogs: list[Backlog]
    flagged: dict[str, int]
    read_at: datetime


def read_database_figures() -> DatabaseFigures:
    """The figures, read now: one aggregate query per embedded model, one count per model
    that keeps integrity flags (each a scan of its table)."""
    from prospect_memory.core.embedding_pipeline import backlogs
    from prospect_memory.core.models import flagged_rows

    return DatabaseFigures(backlogs(), flagged_rows(), timezone.now())


class DatabaseCollector(Collector):
    """The database's figures as metrics, their ages counted at this scrape."""

    def __init__(self, figures: DatabaseFigures) -> None:
        self.figures = figures

    def collect(self) -> Iterator[GaugeMetricFamily]:
        pending = GaugeMetricFamily(
            "kit_embedding_pending_rows", "Rows waiting for an embedding.", labels=["model"]
        )
        oldest = GaugeMetricFamily(
            "kit_embedding_pending_oldest_seconds",
            "How long the oldest row waiting for an embedding has waited.",
            labels=["model"],
        )
        current = GaugeMetricFamily(
            "kit_embedding_current_rows",
            "Rows with a vector of the model in force (re-embedding progress: of total).",
            labels=["model"],
        )
        total = GaugeMetricFamily(
            "kit_embedding_rows", "Rows that are embedded or wait to be.", labels=["model"]
        )
        now = timezone.now()
        for backlog in self.figures.backlogs:
            pending.add_metric([backlog.label], backlog.pending)
            waited = (now - backlog.oldest_pending).total_seconds() if backlog.oldest_pending else 0
            oldest.add_metric([backlog.label], max(waited, 0.0))
            current.add_metric([backlog.label], backlog.current)
            total.add_metric([backlog.label], backlog.total)
        flagged = GaugeMetricFamily(
            "kit_integrity_flagged_rows",
            "Rows whose text holds integrity flags no person cleared.",
            labels=["model"],
        )
        for model, count in self.figures.flagged.items():
            flagged.add_metric([model], count)
        age = GaugeMetricFamily(
            "kit_metrics_database_figures_age_seconds",
            "How long ago the figures above were read from the database (a scrape reuses "
            "them for KIT_METRICS_DATABASE_REUSE_SECONDS).",
        )
        age.add_metric([], max((now - self.figures.read_at).total_seconds(), 0.0))
        yield from (pending, oldest, current, total, flagged, age)


def _scrape() -> bytes:
    """This scrape's figures: every worker's counts (multiprocess) or this process's, then
    the database's."""
    counted: CollectorRegistry = REGISTRY
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        counted = CollectorRegistry()
        multiprocess.MultiProcessCollector(counted)  # type: ignore[no-untyped-call]
    up = GaugeMetricFamily(
        "kit_metrics_database_up", "Whether the database answered at this scrape."
    )
    try:
        figures = _database_figures()
    except DatabaseFailure as error:
        # The counts are what an operator needs most when the database is down: served.
        logger.warning("the database's figures could not be read: %s", type(error).__name__)
        database, answered = b"", 0
    else:
        read = CollectorRegistry()
        read.register(DatabaseCollector(figures))
        database, answered = generate_latest(read), 1
    up.add_metric([], answered)
    alive = CollectorRegistry()
    alive.register(_Fixed(up))
    return generate_latest(counted) + database + generate_latest(alive)


def _figures_key() -> str:
    """Where a scrape keeps the database's figures for the next, in Django's cache: named
    for the database, so installs that share a cache keep their own."""
    database = settings.DATABASES["default"]
    return f"kit:metrics:database:{database.get('HOST')}:{database.get('PORT')}:{database['NAME']}"


def _database_figures() -> DatabaseFigures:
    """The database's figures as read at most ``KIT_METRICS_DATABASE_REUSE_SECONDS`` ago:
    counting every account's rows is a scan, which a scraper every few seconds, one per
    node, would repeat for nothing. Whether the database answers is asked at every scrape."""
    reuse = settings.KIT_METRICS_DATABASE_REUSE_SECONDS
    kept = None
    if reuse > 0:
        with _cache_failures("read"):
            kept = cache.get(_figures_key())
    if isinstance(kept, DatabaseFigures):
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute("SELECT 1")
        return kept
    figures = read_database_figures()
    if reuse > 0:
        with _cache_failures("kept"):
            cache.set(_figures_key(), figures, reuse)
    return figures


@contextlib.contextmanager
def _cache_failures(what: str) -> Iterator[None]:
    # A shared cache that does not answer costs the scrape a fresh read, not its answer.
    try:
        yield
    except Exception as error:  # the cache's client raises its own kinds
        logger.warning("the scrape's figures could not be %s in the cache: %r", what, error)


def forget() -> None:
    """Read the database's figures again at the next scrape (tests change them)."""
    with _cache_failures("forgotten"):
        cache.delete(_figures_key())


class _Fixed(Collector):
    """A collector of metrics already read."""

    def __init__(self, *families: GaugeMetricFamily) -> None:
        self.families = families

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self.families


def _refusal(status: int, message: str) -> HttpResponse:
    response = HttpResponse(message + "\n", status=status, content_type="text/plain")
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="kit-metrics"'
    return response


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """The figures, to a scraper that sends ``KIT_METRICS_TOKEN`` as a Bearer token; without
    the setting there are none to read."""
    token: str = settings.KIT_METRICS_TOKEN
    if not token:
        return _refusal(404, "Metrics are off: set KIT_METRICS_TOKEN to read them.")
    sent = request.headers.get("Authorization", "")
    given = sent[7:].strip() if sent.startswith("Bearer ") else ""
    if not hmac.compare_digest(given.encode(), token.encode()):
        return _refusal(401, "Send KIT_METRICS_TOKEN as 'Authorization: Bearer <token>'.")
    return HttpResponse(_scrape(), content_type=CONTENT_TYPE_LATEST)
