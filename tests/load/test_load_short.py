"""A short load run with the correctness checker (``KIT_LONG_TESTS=1``: a longer one)."""

import asyncio
import os

import pytest

from bench.load import check, drive, make_agents, report

pytestmark = pytest.mark.django_db(transaction=True)

LONG = bool(os.environ.get("KIT_LONG_TESTS"))


def test_concurrent_agents_lose_nothing_and_break_no_limit(live_kit, limits):
    agents = make_agents(48 if LONG else 12, 4, live_kit.url, domains_per_account=3)
    outcome = asyncio.run(drive(live_kit.url, agents, 60 if LONG else 8))
    print(report(outcome, 60 if LONG else 8))
    assert outcome.saves, "the load made no save at all"
    assert check(outcome) == []
