"""Where Celery's autodiscovery looks: the notes' tasks (their names stay
``prospect_memory.tasks.*``, so tasks queued before they moved still run), and the data
lifecycle's daily jobs."""

from __future__ import annotations

from celery import shared_task

from prospect_memory.lifecycle import retention
from prospect_memory.notes import tasks  # noqa: F401  (registers the tasks)


@shared_task(name="prospect_memory.tasks.apply_retention", ignore_result=True)
def apply_retention() -> dict[str, int]:
    """Apply the retention settings once (daily); what each rule removed."""
    return retention.apply_retention().removed


@shared_task(name="prospect_memory.tasks.erase_closed_accounts", ignore_result=True)
def erase_closed_accounts() -> int:
    """Erase the accounts closed longer ago than their retention (daily); how many."""
    return len(retention.erase_closed_accounts())
