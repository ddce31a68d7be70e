"""Work a request leaves for after its answer: run once the WSGI server has written the
response and closes it (Django's ``request_finished``), in the request's own thread, so the
caller does not wait for it.

Only a request that ``kit.middleware.AfterAnswerMiddleware`` opened collects such work;
anywhere else (a task, a command, a shell, an ASGI request, whose response may close in
another thread) :func:`defer` does the work at once. Work left for after the answer is
lost if the process dies before it runs: leave here only what something else does again
(an embedding the backfill makes).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.core.signals import request_finished
from django.dispatch import receiver

logger = logging.getLogger(__name__)

_local = threading.local()


def available() -> bool:
    """Whether work deferred now runs after the answer (rather than at once)."""
    return getattr(_local, "jobs", None) is not None


def defer(job: Callable[[], None]) -> None:
    """Do ``job`` once the answer is written, or at once outside such a request."""
    jobs = getattr(_local, "jobs", None)
    if jobs is None:
        job()
    else:
        jobs.append(job)


def collect() -> None:
    """Collect the work of the request this thread now handles, for :func:`run_collected`
    (a request whose response never closed left its work here: the next one drops it)."""
    _local.jobs = []


@receiver(request_finished, dispatch_uid="outreach.after_answer")
def run_collected(**kwargs) -> None:
    """Do the work the finished request left, each job on its own: one that fails is
    logged, and the others still run."""
    jobs, _local.jobs = getattr(_local, "jobs", None), None
    for job in jobs or ():
        try:
            job()
        except Exception:
            logger.exception("work left for after an answer failed")
