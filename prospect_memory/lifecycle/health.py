"""The data lifecycle's part of the memory health page: what is kept for how long, and
what the daily retention job last removed."""

from __future__ import annotations

from prospect_memory.core.health import HealthSection
from prospect_memory.lifecycle.retention import last_run, rules


def section(account) -> HealthSection:
    run = last_run()
    removed = run.removed if run else {}
    return HealthSection(
        "lifecycle/_retention_health.html",
        {
            "rules": [(rule, removed.get(rule.name)) for rule in rules()],
            "run": run,
            "closed_at": account.closed_at,
        },
    )
