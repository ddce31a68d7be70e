"""Liveness and readiness (SPEC 19), for load balancers and orchestrators: no sign-in, and
nothing of any account in either answer.

``GET /healthz`` is 200 while the process serves: it asks nothing of anything else, so a
database outage never has the orchestrator restart healthy web processes.

``GET /readyz`` is 200 when this process can answer requests: the database answers (with
pgvector), every migration is applied, the embedding model is loaded (loading it now if
this process has not yet: once, ~1 s) and the Celery broker answers when one is
configured; else 503, naming what is not ready (reasons that name files are in the log,
not the answer). A check that passes once stays passed where nothing can undo it
(migrations, the model); a process reuses its last round of checks for
``KIT_READINESS_REUSE_SECONDS``, so probes cost it at most one round that often.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process serves."""
    return JsonResponse({"status": "ok"})


def _database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
    except DatabaseError as error:
        return f"the database does not answer ({type(error).__name__})"
    return None if row else "the database has no pgvector extension"


_migrated = False


def _migrations() -> str | None:
    global _migrated
    if _migrated:
        return None
    try:
        executor = MigrationExecutor(connection)
        waiting = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as error:
        return f"the migrations could not be read ({type(error).__name__})"
    if waiting:
        return f"{len(waiting)} migrations are not applied (run manage.py migrate)"
    _migrated = True
    return None


def _model() -> str | None:
    from prospect_memory.core.embeddings import get_provider

    try:
        provider = get_provider()
        provider.verify()
        provider.warm()
    except Exception as error:  # any failure to load is "not ready", said in words
        # The reason names files and hashes: for the operator's log, not for anyone who
        # asks (the probe needs no sign-in).
        logger.warning("the embedding model is not loaded: %s", error)
        return f"the embedding model is not loaded ({type(error).__name__}; see the log)"
    return None


def _broker() -> str | None:
    url = settings.CELERY_BROKER_URL
    if not url:
        return None
    from kombu import Connection

    wait = settings.KIT_READINESS_BROKER_TIMEOUT_SECONDS
    try:
        with Connection(url, connect_timeout=wait) as broker:  # type: ignore[no-untyped-call]  # kombu: no types
            broker.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=wait)
    except Exception as error:  # kombu raises its transport's own errors
        return f"the broker does not answer ({type(error).__name__})"
    return None


#: Each part a process needs before it serves, in the order they are asked.
CHECKS: dict[str, Callable[[], str | None]] = {
    "database": _database,
    "migrations": _migrations,
    "model": _model,
    "broker": _broker,
}


_last: tuple[float, dict[str, str]] | None = None
_checking = threading.Lock()


def _problems() -> dict[str, str]:
    global _last
    with _checking:  # one round at a time: the others wait for its answer
        reuse = settings.KIT_READINESS_REUSE_SECONDS
        if _last is not None and time.monotonic() - _last[0] < reuse:
            return _last[1]
        problems: dict[str, str] = {}
        for name, check in CHECKS.items():
            if name == "migrations" and "database" in problems:
                problems[name] = "not checked: the database does not answer"
                continue
            problem = check()
            if problem is not None:
                problems[name] = problem
        if problems:
            logger.warning("not ready: %s", "; ".join(f"{k}: {v}" for k, v in problems.items()))
        _last = (time.monotonic(), problems)
        return problems


def forget() -> None:
    """Check again at the next call (tests change what is checked)."""
    global _last
    _last = None


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200, or 503 with what is not ready."""
    problems = _problems()
    if problems:
        return JsonResponse({"ready": False, "not_ready": problems}, status=503)
    return JsonResponse({"ready": True, "checks": sorted(CHECKS)})
