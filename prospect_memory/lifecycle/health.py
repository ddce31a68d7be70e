"""The data lifecycle's part of the memory health page: what is kept for how long, and
when the daily retention job last ran (what it removed is counted over every account, so
the page does not show it)."""

from __future__ import annotations

from prospect_memory.core.health import HealthSection
from prospect_memory.lifecycle.retention import last_run, rules


def section(account) -> HealthSection:
    return HealthSection(
        "lifecycle/_retention_health.html",
        {"rules": rules(), "run": last_run(), "closed_at": account.closed_at},
    )
