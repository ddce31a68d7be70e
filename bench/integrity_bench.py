"""Memory integrity's costs (SPEC 15, issue 17), measured in process on this machine.

- The checks per note: refusal of invisible characters plus the flag scan, over the clean
  and the poisoned notes of the labelled set, and over the largest note a save accepts
  (10 KB of ordinary research that mentions AI, assistants and instructions).
- The entry page at its worst: an entry with 20 kept versions, each a value of the maximum
  size built against comparison (lists of short repeated or shuffled strings), rendered
  through the whole Django stack (a signed-in test client: middleware, view, template);
  and the page that compares one such pair.

Run as part of ``scripts/bench`` or alone: ``.venv/bin/python bench/integrity_bench.py``.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def checks_cost(rounds: int = 5, alone: int = 200) -> dict:
    """Microseconds per item of the write-time checks (the very functions a write calls),
    by kind of item, from the labelled set to the worst inputs found: each item of a group
    ``rounds`` times, a group of one item ``alone`` times."""
    from prospect_memory.core.integrity.report import DEFAULT_SET, item_flags, item_refused, load

    items = [i for i in load(DEFAULT_SET) if i["kind"] == "note"]
    groups = {
        "clean notes": [i for i in items if i["label"] == "clean"],
        "poisoned notes": [i for i in items if i["label"] == "poisoned"],
    }
    spelled = [
        i
        for i in load(DEFAULT_SET.with_name("integrity_set_spellings.jsonl"))
        if i["kind"] == "note"
    ]
    groups["clean notes as a page spells them (&amp;, &nbsp;, &#8217;)"] = [
        i for i in spelled if i["label"] == "clean"
    ]
    groups["poisoned notes, spelled to pass (references, accents, look-alikes)"] = [
        i for i in spelled if i["label"] == "poisoned"
    ]
    clean_bodies = " ".join(i["body"] for i in groups["clean notes"])

    def note(body: str) -> dict:
        return {"kind": "note", "title": "Largest", "body": body, "source_urls": ["https://a.b/"]}

    groups["10 KB of research about AI"] = [
        note(clean_bodies.encode()[: 10 * 1024].decode(errors="ignore"))
    ]
    # 10 KB with a character reference every few words: decoded three times over.
    groups["10 KB of research, a reference every ten words"] = [
        note(
            " ".join(
                f"&#x{ord(w[0]):X};{w[1:]}" if n % 10 == 0 and w else w
                for n, w in enumerate(" ".join(i["body"] for i in groups["clean notes"]).split(" "))
            )
            .encode()[: 10 * 1024]
            .decode(errors="ignore")
        )
    ]
    # Runs of joined AI words, which once made a rule try every split of the run.
    run = ("ia-ai-ki-" * 400)[:1200]
    groups["2.4 KB: two runs of joined AI words ('ia-ai-ki-')"] = [note(run + " " + run)]
    groups["10 KB of trigger words ('ai: ia: ')"] = [note(("ai: ia: " * 1500)[: 10 * 1024])]
    # Long runs a pattern could read to their end from every position: the address keeps
    # the sending rules on, "İ" (longer in lower case) keeps the text from being windowed.
    groups["16 KB run of hyphenated letters, an address ('a-a-a-')"] = [
        note("bitte İ x@y.example " + "a-" * 8000)
    ]
    groups["16 KB of one directive, an address ('always ')"] = [
        note("İ x@y.example " + "always " * 2300)
    ]
    groups["16 KB of spaces and line breaks inside an order"] = [
        note("İ x@y.example. Send the ICP" + " " * 8000 + "\n" * 8000 + "x")
    ]
    groups["16 KB entry of 3,000 short strings"] = [
        {"kind": "entry", "key": "k", "value": ["ai"] * 3000}
    ]
    results = {}
    for name, group in groups.items():
        for item in group:  # warm the compiled patterns
            item_refused(item), item_flags(item)
        samples = []
        for _ in range(rounds if len(group) > 1 else alone):
            for item in group:
                start = time.perf_counter()
                item_refused(item)
                item_flags(item)
                samples.append((time.perf_counter() - start) * 1e6)
        results[name] = (statistics.median(samples), _percentile(samples, 99), len(group))
    return results


def _largest(item, limit: int) -> list:
    values: list = []
    while True:
        values.append(item(len(values)))
        if len(json.dumps(values, separators=(",", ":")).encode()) > limit:
            return values[:-1]


def entry_page_cost(iterations: int = 200) -> dict:
    """Milliseconds of the entry page (and of one comparison page) at their worst."""
    from django.test import Client

    from outreach.access import Actor
    from outreach.services import account_create, member_create
    from prospect_memory.business.conf import business_settings
    from prospect_memory.business.services.store import entry_store

    account = account_create(slug=f"integrity-bench-{random.randrange(10**9)}")
    member = member_create(account=account, email="pages@bench.example", is_module_admin=True)
    actor = Actor.for_member(member)
    limit = business_settings.VALUE_MAX_BYTES
    rng = random.Random(17)

    def nested(n: int):
        value = n
        for _ in range(business_settings.VALUE_MAX_DEPTH - 4):
            value = [value]
        return value

    shapes = [
        lambda version: _largest(lambda i: "a" if i % 2 else "b", limit),
        lambda version: _largest(lambda i: 0, limit),  # 8,000 one-character lines
        lambda version: _largest(nested, limit),  # 15,000 lines indented
        lambda version: _largest(lambda i: f"{(i * (version + 3)) % 101}", limit),
        lambda version: rng.sample(_largest(lambda i: f"x{i}", limit), k=1500),
    ]
    for version in range(business_settings.HISTORY_VERSIONS + 1):
        value = shapes[version % len(shapes)](version)
        entry_store(actor=actor, key="worst", value=value, layer="member")
    # And an entry whose versions are compared inline: about 1,000 lines each.
    for version in range(business_settings.HISTORY_VERSIONS + 1):
        value = {f"field_{i}": f"value {i * (version + 1) % 97}" for i in range(330)}
        entry_store(actor=actor, key="inline", value=value, layer="member")
    browser = Client(HTTP_HOST="127.0.0.1")
    browser.force_login(member.user)
    page = "/business-memory/member/worst/"
    pair = "/business-memory/member/worst/versions/2/changes/"
    inline = "/business-memory/member/inline/"
    for path in (page, pair, inline):
        assert browser.get(path).status_code == 200
    gc.freeze()  # as each gunicorn worker does once it has loaded Kit (gunicorn.conf.py)
    results = {}
    paths = (
        ("entry page, 20 versions of 16 KB values", page),
        ("one comparison of two 16 KB values", pair),
        ("entry page, 20 versions compared inline", inline),
    )
    for name, path in paths:
        samples = []
        for _ in range(iterations):
            start = time.perf_counter()
            response = browser.get(path)
            samples.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
        results[name] = (statistics.median(samples), _percentile(samples, 99))
    return results


def report(checks: dict, pages: dict) -> None:
    print()
    print("| integrity checks per item (refusal + flags) | p50 | p99 | items |")
    print("|---|---:|---:|---:|")
    for name, (p50, p99, n) in checks.items():
        print(f"| {name} | {p50:.0f} µs | {p99:.0f} µs | {n} |")
    print()
    print("| pages at their worst (16 KB values built against comparison) | p50 | p99 |")
    print("|---|---:|---:|")
    for name, (p50, p99) in pages.items():
        print(f"| {name} | {p50:.1f} ms | {p99:.1f} ms |")


def main() -> None:
    from argparse import Namespace

    from bench.environment import setup

    setup(Namespace(provider="hashing"))  # the pages' costs; the checks embed nothing
    report(checks_cost(), entry_page_cost())


if __name__ == "__main__":
    main()
