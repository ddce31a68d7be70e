"""Where Celery's autodiscovery looks: the notes' tasks (their names stay
``prospect_memory.tasks.*``, so tasks queued before they moved still run), and the data
lifecycle's daily jobs."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from prospect_memory.lifecycle import retention
from prospect_memory.notes import tasks  # noqa: F401  (registers the tasks)

#: Both daily jobs are safe to run twice (what is gone stays gone); a lost database
#: connection is tried again, a run that takes an hour is stopped for the next day's.
DAILY_JOB_OPTIONS = {
    "ignore_result": True,
    "acks_late": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": 60,
    "max_retries": 3,
    "soft_time_limit": 3600,
    "time_limit": 3900,
}


@shared_task(name="prospect_memory.tasks.apply_retention", **DAILY_JOB_OPTIONS)
def apply_retention() -> dict[str, int]:
    """Apply the retention settings once (daily); what each rule removed."""
    return retention.apply_retention().removed


@shared_task(name="prospect_memory.tasks.erase_closed_accounts", **DAILY_JOB_OPTIONS)
def erase_closed_accounts() -> int:
    """Erase the accounts closed longer ago than their retention (daily); how many."""
    return len(retention.erase_closed_accounts())
