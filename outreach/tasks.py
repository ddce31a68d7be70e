from celery import shared_task

from outreach.ratelimit import prune


@shared_task
def prune_rate_windows() -> int:
    """Forget rate-limit windows older than an hour."""
    return prune()
