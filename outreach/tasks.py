from celery import shared_task

from outreach.oauth import prune_redeemed_codes
from outreach.ratelimit import prune


@shared_task
def prune_expired_limits() -> int:
    """Forget rate-limit windows older than two hours and redeemed codes older than a day."""
    return prune() + prune_redeemed_codes()
