#!/usr/bin/env python
"""The everyday pages, in process (Django's test client, templates rendered, no network):
the search page beside the operation it runs, the activity page and the business memory
pages, on the demo account grown to 1,000 notes over 100 companies, 60 business memory
entries and about 1,150 events.

Each pair is timed call by call in turn (``measure_together``), so the page's cost over its
operation is a ratio on this machine, not two measurements an hour apart.

Run: ``.venv/bin/python bench/pages_bench.py [--provider semantic|hashing]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import add_provider_argument, setup  # noqa: E402
from bench.memory_bench import measure_together, percentile  # noqa: E402

QUESTIONS = [
    "who is hiring account executives",
    "which companies raised a Series B",
    "what is our brand voice",
    "companies moving to the cloud",
    "which prospects use Salesforce",
]


def grow(owner) -> None:
    from outreach.access import Actor
    from prospect_memory.business.services.store import entry_store
    from prospect_memory.notes.rules import utc_today
    from prospect_memory.notes.services.notes import note_save

    actor = Actor.for_member(owner)
    facts = [
        "is hiring {n} account executives in Berlin",
        "raised a Series B of {n}M",
        "moved its data warehouse to Snowflake",
        "uses Salesforce and HubSpot",
        "opened an office in Lisbon with {n} people",
    ]
    for c in range(100):
        for k in range(10):
            note_save(
                actor=actor,
                domain=f"company{c}.dev",
                title=f"Finding {k}",
                body=f"Company{c} " + facts[(c + k) % len(facts)].format(n=c + k) + ".",
                source_urls=[f"https://company{c}.dev/news/{k}"],
                observed_at=utc_today().isoformat(),
            )
    for i in range(60):
        entry_store(actor=actor, key=f"pattern:{i:02d}", value={"rule": f"Pattern {i}"})
        entry_store(actor=actor, key=f"pattern:{i:02d}", value={"rule": f"Pattern {i}, again"})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=200)
    add_provider_argument(parser)
    args = parser.parse_args()
    setup(args)
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from outreach.access import Actor
    from outreach.models import Member
    from prospect_memory.knowledge.operations import SEARCH
    from prospect_memory.notes.conf import notes_settings

    settings.ALLOWED_HOSTS = ["*"]
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "DAILY_SAVE_LIMIT": 10**9}
    notes_settings.reload()
    call_command("seed_demo", "--allow-insecure-demo", verbosity=0)
    call_command("seed_demo_research", verbosity=0)
    call_command("seed_demo_business_memory", verbosity=0)
    owner = Member.objects.select_related("user", "account").get(
        account__slug="demo", user__username="demo@kit.test"
    )
    grow(owner)
    actor = Actor.for_member(owner)
    browser = Client()
    browser.force_login(owner.user)

    def ask(i):
        return QUESTIONS[i % len(QUESTIONS)]

    def page(path, **params):
        def fetch(i):
            response = browser.get(path, params)
            assert response.status_code == 200, response.status_code

        return fetch

    for i in range(10):  # warm-up
        SEARCH.run(actor, {"query": ask(i), "limit": 20})
        browser.get("/search/", {"q": ask(i)})
    operation, search_page = measure_together(
        [
            lambda i: SEARCH.run(actor, {"query": ask(i), "limit": 20}),
            lambda i: page("/search/", q=ask(i))(i),
        ],
        args.iterations,
    )
    activity, memory, edit = measure_together(
        [
            page("/activity/"),
            page("/business-memory/"),
            page("/business-memory/account/icp_definition/edit/"),
        ],
        args.iterations,
    )
    print(f"embedding provider: {settings.PROSPECT_MEMORY['EMBEDDING_PROVIDER']}")
    print("| what | p50 | p99 |\n|---|---:|---:|")
    for name, samples in (
        ("knowledge search, the operation (20 hits)", operation),
        ("the search page (the operation, grouped and rendered)", search_page),
        ("the activity page (50 of about 1,150 events)", activity),
        ("the business memory page (64 entries)", memory),
        ("the ICP's edit page", edit),
    ):
        print(
            f"| {name} | {statistics.median(samples):.2f} ms | {percentile(samples, 99):.2f} ms |"
        )
    print(
        f"\nsearch page / operation, p50: "
        f"{statistics.median(search_page) / statistics.median(operation):.2f}"
    )


if __name__ == "__main__":
    main()
