"""Load with correctness: many concurrent MCP agents running the research loop.

A bounded asyncio client (loopback only, fixed time, fixed number of agents) drives
Kit's MCP endpoint: each agent recalls a company, saves findings with a unique marker,
and now and then compacts a dossier. Afterwards :func:`check` reads the database and
proves that every acknowledged save is stored exactly once, no domain holds more than 50
active notes, no account saved more than 200 notes in a day, no note crossed accounts, and
no request got a 5xx.

Standalone: ``scripts/load [--agents 48 --seconds 60 --accounts 6]`` (its own embedded
PostgreSQL and gunicorn). The test suite runs a short version (tests/load/).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import httpx2


@dataclass
class Agent:
    token: str
    account_slug: str
    domains: list[str]


@dataclass
class Outcome:
    saves: dict[str, tuple[str, str]] = field(default_factory=dict)  # note id -> (account, marker)
    compactions: list[str] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    codes: Counter = field(default_factory=Counter)
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    requests: int = 0


async def _call(http, base, agent, tool, arguments, outcome: Outcome):
    message = {
        "jsonrpc": "2.0",
        "id": random.randint(1, 10**9),
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    start = time.perf_counter()
    try:
        response = await http.post(
            f"{base}/mcp",
            content=json.dumps(message),
            headers={
                "Authorization": f"Bearer {agent.token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
        )
    except httpx2.TransportError:  # no answer at all (a server killed, a connection reset)
        outcome.requests += 1
        outcome.statuses[0] += 1
        return None
    outcome.latency[tool].append((time.perf_counter() - start) * 1000)
    outcome.requests += 1
    outcome.statuses[response.status_code] += 1
    if response.status_code != 200:
        return None
    answer = response.json()
    if "result" not in answer:  # a JSON-RPC error (the database gone for a moment, say)
        outcome.codes[f"jsonrpc {answer.get('error', {}).get('code')}"] += 1
        return None
    result = answer["result"]
    payload = result["structuredContent"]
    if result["isError"]:
        outcome.codes[payload["error"]["code"]] += 1
        return None
    return payload["data"]


async def _agent_loop(base, agent: Agent, deadline: float, outcome: Outcome, rng: random.Random):
    async with httpx2.AsyncClient(timeout=60) as http:
        while time.monotonic() < deadline:
            domain = rng.choice(agent.domains)
            recall = await _call(
                http, base, agent, "outreach_recall_prospect_context", {"domain": domain}, outcome
            )
            if recall is None:
                continue
            for _ in range(rng.randint(1, 3)):
                marker = uuid.uuid4().hex
                saved = await _call(
                    http,
                    base,
                    agent,
                    "outreach_save_prospect_research",
                    {
                        "domain": domain,
                        "title": f"Finding {marker[:8]}",
                        "body": f"Load finding {marker} about {domain}.",
                        "source_urls": [f"https://{domain}/{marker}"],
                        "observed_at": "2026-11-20",
                    },
                    outcome,
                )
                if saved is not None:
                    outcome.saves[saved["note"]["id"]] = (agent.account_slug, marker)
            if rng.random() < 0.1:
                # A person asked for it: recall again, then merge what that recall showed.
                recall = await _call(
                    http,
                    base,
                    agent,
                    "outreach_recall_prospect_context",
                    {"domain": domain},
                    outcome,
                )
                if recall is None or recall["note_count"] < 2:
                    continue
                merged = await _call(
                    http,
                    base,
                    agent,
                    "outreach_compact_prospect_context",
                    {
                        "domain": domain,
                        "expected_note_count": recall["note_count"],
                        "body": f"Merged dossier of {domain}.",
                    },
                    outcome,
                )
                if merged is not None:
                    outcome.compactions.append(merged["compaction_id"])


async def drive(base: str, agents: list[Agent], seconds: float, seed: int = 1) -> Outcome:
    outcome = Outcome()
    deadline = time.monotonic() + seconds
    rng = random.Random(seed)
    await asyncio.gather(
        *(
            _agent_loop(base, agent, deadline, outcome, random.Random(rng.random()))
            for agent in agents
        )
    )
    return outcome


def check(outcome: Outcome) -> list[str]:
    """Problems found in the database after a run (an empty list means all held)."""
    from django.db.models import Count, F, Q

    from prospect_memory.notes.conf import notes_settings
    from prospect_memory.notes.models import DailySaveCount, Dossier, Note

    problems = []
    server_errors = sum(n for status, n in outcome.statuses.items() if status >= 500)
    if server_errors:
        problems.append(f"{server_errors} responses were 5xx")
    stored = {
        str(n.id): n
        for n in Note.objects.filter(id__in=list(outcome.saves)).select_related("account")
    }
    markers = Counter()
    for note in Note.objects.filter(account__slug__in={a for a, _ in outcome.saves.values()}):
        if note.body.startswith("Load finding "):
            markers[note.body.split()[2]] += 1
    for note_id, (account_slug, marker) in outcome.saves.items():
        note = stored.get(note_id)
        if note is None:
            # Only a delete could remove it, and the load never deletes.
            problems.append(f"acknowledged note {note_id} is missing")
            continue
        if note.account.slug != account_slug:
            problems.append(f"note {note_id} is in account {note.account.slug}, not {account_slug}")
        if markers[marker] != 1:
            problems.append(f"marker {marker} is stored {markers[marker]} times")
    over = Dossier.objects.annotate(active=Count("notes", filter=Q(notes__status="active"))).filter(
        active__gt=notes_settings.DOMAIN_NOTE_LIMIT
    )
    problems += [f"{d.domain} has {d.active} active notes" for d in over]
    problems += [
        f"account {c.account_id} saved {c.saves} notes on {c.day}"
        for c in DailySaveCount.objects.filter(saves__gt=notes_settings.DAILY_SAVE_LIMIT)
    ]
    crossed = Note.objects.exclude(account_id=F("dossier__account_id")).count()
    if crossed:
        problems.append(f"{crossed} notes sit in another account's dossier")
    return problems


def report(outcome: Outcome, seconds: float) -> str:
    lines = [
        f"requests: {outcome.requests} in {seconds:.0f} s ({outcome.requests / seconds:.0f}/s); "
        f"acknowledged saves: {len(outcome.saves)}; compactions: {len(outcome.compactions)}",
        "HTTP statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcome.statuses.items())),
        "tool errors: "
        + (", ".join(f"{k}: {v}" for k, v in outcome.codes.most_common()) or "none"),
    ]
    for tool, samples in sorted(outcome.latency.items()):
        ordered = sorted(samples)
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        lines.append(
            f"{tool}: n={len(samples)} p50={statistics.median(samples):.1f} ms p99={p99:.1f} ms"
        )
    return "\n".join(lines)


def make_agents(count: int, accounts: int, base_url: str, domains_per_account: int = 8):
    """Accounts with a module admin each, and one token (its own OAuth client) per agent."""
    from outreach.services import access_token_issue, account_create, member_create

    members = []
    for a in range(accounts):
        account = account_create(slug=f"load-{a}-{uuid.uuid4().hex[:6]}")
        members.append(
            member_create(account=account, email=f"agent{a}@load.example", is_module_admin=True)
        )
    agents = []
    for i in range(count):
        member = members[i % accounts]
        token = access_token_issue(
            member=member,
            scopes=["outreach_read", "outreach_write"],
            client_name=f"Load agent {i}",
            expires_days=1,
            base_url=base_url,
        )
        domains = [f"company{d}-{member.account.slug}.com" for d in range(domains_per_account)]
        agents.append(Agent(token=token, account_slug=member.account.slug, domains=domains))
    return agents


def main() -> None:
    import os
    import sys
    import tempfile
    from pathlib import Path

    parser = argparse.ArgumentParser(description="Load Kit's MCP endpoint and check correctness.")
    parser.add_argument("--agents", type=int, default=48)
    parser.add_argument("--accounts", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    if not (1 <= args.agents <= 500 and 1 <= args.seconds <= 1800):
        parser.error("agents 1-500 and seconds 1-1800: the load is bounded")

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    scratch = Path(tempfile.mkdtemp(prefix="kit-load-"))
    os.environ.setdefault("KIT_DATA_DIR", str(scratch / "data"))
    os.environ.setdefault("SECRET_KEY", "kit-load-" + uuid.uuid4().hex * 2)
    os.environ["DJANGO_SETTINGS_MODULE"] = "kit.settings"
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("SECURE_SSL_REDIRECT", "false")  # plain-http loopback
    from prospect_memory.core.crypto import generate_key

    os.environ.setdefault("PROSPECT_MEMORY_ENCRYPTION_KEYS", generate_key())
    from kit.db import database_url, throwaway_database

    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = database_url(throwaway_database(scratch))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from tests.live import LiveServer

    server = LiveServer(os.environ["DATABASE_URL"], workers=args.workers)
    try:
        agents = make_agents(args.agents, args.accounts, server.url)
        started = time.monotonic()
        outcome = asyncio.run(drive(server.url, agents, args.seconds))
        elapsed = time.monotonic() - started
    finally:
        server.stop()
    print(report(outcome, elapsed))
    problems = check(outcome)
    print("correctness: " + ("all checks held" if not problems else f"{len(problems)} problems"))
    for problem in problems[:50]:
        print("  " + problem)
    raise SystemExit(1 if problems else 0)


if __name__ == "__main__":
    main()
