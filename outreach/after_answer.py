"""Work a request leaves for after its answer: run once the WSGI server has written the
response and closes it (Django's ``request_finished``), in the request's own thread, so the
caller does not wait for it.

Only a request that ``kit.middleware.AfterAnswerMiddleware`` handles collects such work,
while its view and middleware run; anywhere else (a task, a command, a shell, an ASGI
request, whose response may close in another thread, or a streaming response's body)
:func:`defer` does the work at once. Work left for after the answer is lost if the process
dies before it runs, or if its response is never closed: leave here only what something
else does again (an embedding the backfill makes). The worker stays busy for the work
after it answers: with gunicorn's gthread workers, the next request on the same
connection waits for it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.core.signals import request_finished
from django.db import connections
from django.dispatch import Signal, receiver

logger = logging.getLogger(__name__)

_local = threading.local()

#: Sent once a request's work has run, with ``seconds``: the time its worker spent on it
#: after the answer, which the request's own latency does not hold (the project's metrics
#: count it).
worked = Signal()


def available() -> bool:
    """Whether work deferred now runs after the answer (rather than at once)."""
    return getattr(_local, "collecting", None) is not None


def defer(job: Callable[[], None]) -> None:
    """Do ``job`` once the answer is written, or at once outside such a request."""
    jobs = getattr(_local, "collecting", None)
    if jobs is None:
        job()
    else:
        jobs.append(job)


def collect() -> None:
    """Collect the work of the request this thread now handles (work an earlier request
    left behind, its response never closed, is dropped)."""
    _local.collecting, _local.answered = [], []


def answered() -> None:
    """The request's view and middleware are done: its work waits for the response to
    close, and nothing more is collected."""
    _local.answered = getattr(_local, "collecting", None) or []
    _local.collecting = None


@receiver(request_finished, dispatch_uid="outreach.after_answer")
def run_collected(**kwargs) -> None:
    """Do the work the finished request left, each job on its own: one that fails is
    logged, and the others still run. Then the database connections the work used are
    judged as Django judges a request's at its end (``close_old_connections``, which ran
    before this work): a connection past ``CONN_MAX_AGE`` does not outlive its request."""
    jobs, _local.answered = getattr(_local, "answered", None), None
    if not jobs:
        return
    started = time.perf_counter()
    for job in jobs:
        try:
            job()
        except Exception:
            logger.exception("work left for after an answer failed")
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()
    worked.send_robust(sender=None, seconds=time.perf_counter() - started)
