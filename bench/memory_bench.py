#!/usr/bin/env python
"""Kit's memories at scale: prospect recall and save at 1k, 100k and 1M stored notes, then
business memory (``bench/business_bench.py``) alone and among 100k entries and the most notes,
then memory integrity's costs (``bench/integrity_bench.py``).

Seeds the notes in bulk (COPY) across many accounts and domains, then measures, at each
size, in-process and on this machine:

- ``dossier_recall`` + ``recall_data`` on full 50-note dossiers (the service an MCP tool or
  REST view calls; no HTTP), as a company is recalled again (its overlap pairs and notes'
  answers kept from the last recall), as the first recall after a save (the newest note's
  pairs and answer made, the others' kept) and as in a process that kept nothing;
- the floor: the same recall as hand-written SQL (notes, relationship, overlap pairs) plus
  decryption, with no ORM, no dataclasses and no payload building;
- ``note_save`` with the embedding provider of ``--provider`` (default: the local semantic
  model a fresh install uses, one intra-op thread as under gunicorn), on fresh domains of
  the measured accounts: the provider's time is part of a save.

Run: ``scripts/bench`` (all sizes) or ``scripts/bench --sizes 1000,10000`` (quick).
It starts its own throwaway embedded PostgreSQL unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.environment import add_provider_argument, setup  # noqa: E402

PROBE_ACCOUNTS = 10
NOTES_PER_FILLER_DOSSIER = 10
DOSSIERS_PER_FILLER_ACCOUNT = 100
FACTS = [
    "raised a Series {n} round led by a European fund",
    "is hiring {n} engineers for its data platform",
    "moved its headquarters to a larger office in Lyon",
    "launched a self-serve plan priced per seat",
    "named a new VP of Sales who joined from a competitor",
    "runs its product on Django and PostgreSQL",
    "signed a partnership with a logistics provider",
    "opened a subsidiary in Warsaw with {n} people",
]


def probe_tokens(probes, *, base_url: str, client_name: str, write: bool = False) -> list[str]:
    """One bearer token per probe account, for a server at ``base_url``."""
    from outreach.services import access_token_issue

    scopes = ["outreach_read", "outreach_write"] if write else ["outreach_read"]
    return [
        access_token_issue(
            member=actor.member,
            scopes=scopes,
            client_name=client_name,
            expires_days=1,
            base_url=base_url,
        )
        for actor, _ in probes
    ]


def body_for(rng: random.Random, domain: str) -> str:
    facts = rng.sample(FACTS, 3)
    return (
        " ".join(f"{domain.split('.')[0].title()} {f.format(n=rng.randint(2, 40))}." for f in facts)
        + f" Reported in the company blog; ref {rng.randint(1000, 9999)}."
    )


def seed_probes(rng: random.Random):
    """Ten accounts, each with one full 50-note dossier saved through the real service."""
    from outreach.access import Actor
    from outreach.services import (
        account_create,
        campaign_create,
        member_create,
        message_record,
        prospect_create,
        reply_record,
        suppression_add,
    )
    from prospect_memory.notes.services.notes import note_save

    probes = []
    today = datetime.now(UTC).date()
    for i in range(PROBE_ACCOUNTS):
        account = account_create(slug=f"probe-{i}")
        actor = Actor.for_member(
            member_create(account=account, email=f"p{i}@bench.example", is_module_admin=True)
        )
        domain = f"probe{i}-bench.com"
        campaign = campaign_create(account=account, name="Bench")
        prospect = prospect_create(campaign=campaign, email=f"ceo@{domain}", company_domain=domain)
        message_record(prospect=prospect, subject="hi", sent_at=datetime.now(UTC))
        reply_record(prospect=prospect, sentiment="neutral", received_at=datetime.now(UTC))
        suppression_add(account=account, kind="address", value=f"nobody@{domain}")
        for n in range(50):
            note_save(
                actor=actor,
                domain=domain,
                title=f"Finding {n}",
                body=body_for(rng, domain),
                source_urls=[f"https://{domain}/news/{n}", f"https://press.example/{i}/{n}"],
                observed_at=(today - timedelta(days=n)).isoformat(),
            )
        probes.append((actor, domain))
    return probes


def seed_fillers(rng: random.Random, target: int) -> None:
    """Bulk-load accounts, dossiers and notes until the note table holds ``target`` rows."""
    from django.db import connection

    from prospect_memory.core.crypto import binding, keyring
    from prospect_memory.notes.models import Note
    from prospect_memory.notes.selectors import NOTE_TABLE

    existing = Note.objects.count()
    missing = target - existing
    if missing <= 0:
        return
    per_account = NOTES_PER_FILLER_DOSSIER * DOSSIERS_PER_FILLER_ACCOUNT
    accounts = -(-missing // per_account)
    ring = keyring()
    now = datetime.now(UTC)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM outreach_account")
        first_account = cursor.fetchone()[0] + 1
        cursor.execute("SELECT coalesce(max(id), 0) FROM prospect_memory_dossier")
        first_dossier = cursor.fetchone()[0] + 1
    pg = connection.connection  # the psycopg connection
    account_id = first_account
    dossier_id = first_dossier
    written = 0
    with pg.cursor() as cur:
        with cur.copy(
            "COPY outreach_account (id, slug, name, outreach_addon, subscription_status, "
            "created_at) FROM STDIN"
        ) as copy:
            for a in range(accounts):
                copy.write_row(
                    (
                        first_account + a,
                        f"filler-{first_account + a}",
                        "Filler",
                        True,
                        "active",
                        now,
                    )
                )
        dossiers = []
        with cur.copy(
            "COPY prospect_memory_dossier (id, account_id, domain, active_note_count, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            for a in range(accounts):
                account_id = first_account + a
                for d in range(DOSSIERS_PER_FILLER_ACCOUNT):
                    n = min(
                        NOTES_PER_FILLER_DOSSIER, missing - len(dossiers) * NOTES_PER_FILLER_DOSSIER
                    )
                    if n <= 0:
                        break
                    domain = f"company{d}-{account_id}.com"
                    copy.write_row((dossier_id, account_id, domain, n, now, now))
                    dossiers.append((dossier_id, account_id, domain, n))
                    dossier_id += 1
        with cur.copy(
            "COPY prospect_memory_note (id, account_id, dossier_id, title_ciphertext, "
            "body_ciphertext, body_bytes, source_urls, observed_at, created_at, status, "
            "embedding_model, embedding_status) FROM STDIN"
        ) as copy:
            for did, aid, domain, n in dossiers:
                for k in range(n):
                    note_id = uuid.uuid4()
                    body = body_for(rng, domain)
                    title = f"Finding {k}"
                    ctx = {"table": NOTE_TABLE, "account_id": aid, "row_id": note_id}
                    copy.write_row(
                        (
                            note_id,
                            aid,
                            did,
                            ring.encrypt(title, context=binding(**ctx, field="title")),
                            ring.encrypt(body, context=binding(**ctx, field="body")),
                            len(body.encode()),
                            [f"https://{domain}/news/{k}"],
                            (now - timedelta(days=rng.randint(0, 90))).date(),
                            now,
                            "active",
                            "",
                            "failed",
                        )
                    )
                    written += 1
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval('outreach_account_id_seq', (SELECT max(id) FROM outreach_account))"
        )
        cursor.execute(
            "SELECT setval('prospect_memory_dossier_id_seq', (SELECT max(id) FROM prospect_memory_dossier))"
        )
        cursor.execute("ANALYZE")


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[index]


def measure(fn, iterations: int) -> list[float]:
    samples = []
    for i in range(iterations):
        start = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def measure_together(fns, iterations: int) -> list[list[float]]:
    """Time ``fns`` in turn, call by call, so a ratio between them does not depend on
    what the machine's neighbours did while one of them ran alone; the order rotates, so
    none is always the one that runs after the others warmed or cooled the caches."""
    samples: list[list[float]] = [[] for _ in fns]
    for i in range(iterations):
        for shift in range(len(fns)):  # each in every position of the turn, in rotation
            k = (i + shift) % len(fns)
            start = time.perf_counter()
            fns[k](i)
            samples[k].append((time.perf_counter() - start) * 1000)
    return samples


_FLOOR_NOTES = """
SELECT n.id::text, n.title_ciphertext, n.body_ciphertext, n.source_urls, n.observed_at,
       n.created_at
  FROM prospect_memory_note n
  JOIN prospect_memory_dossier d ON d.id = n.dossier_id AND d.account_id = n.account_id
 WHERE n.account_id = %(a)s AND d.domain = %(d)s AND n.status = 'active'
 ORDER BY n.observed_at DESC, n.created_at DESC
"""
_FLOOR_PAIRS = """
WITH recent AS (
    SELECT n.id, n.embedding FROM prospect_memory_note n
      JOIN prospect_memory_dossier d ON d.id = n.dossier_id AND d.account_id = n.account_id
     WHERE n.account_id = %(a)s AND d.domain = %(d)s AND n.status = 'active'
     ORDER BY n.observed_at DESC, n.created_at DESC LIMIT %(window)s
)
SELECT a.id, b.id, a.embedding <=> b.embedding FROM recent a JOIN recent b ON a.id < b.id
 WHERE a.embedding <=> b.embedding <= %(threshold)s
"""
_FLOOR_RELATIONSHIP = """
SELECT (SELECT count(*) FROM outreach_message m JOIN outreach_prospect p ON p.id = m.prospect_id
         WHERE m.account_id = %(a)s AND p.company_domain = %(d)s AND m.status = 'sent'),
       (SELECT array_agg(DISTINCT c.name) FROM outreach_campaign c
          JOIN outreach_prospect p ON p.campaign_id = c.id
         WHERE c.account_id = %(a)s AND p.company_domain = %(d)s),
       (SELECT r.sentiment FROM outreach_reply r JOIN outreach_prospect p ON p.id = r.prospect_id
         WHERE r.account_id = %(a)s AND p.company_domain = %(d)s
         ORDER BY r.received_at DESC LIMIT 1),
       (SELECT count(*) FROM outreach_suppression s
         WHERE s.account_id = %(a)s AND s.kind = 'domain' AND s.value = %(d)s)
"""


def scrape_figures(_i: int) -> None:
    """What a scrape of ``/metrics`` asks the database (``kit.metrics``): the embedding
    queue and re-embedding progress per model, the flagged rows, across every account."""
    from kit.metrics import read_database_figures

    assert read_database_figures().backlogs


def floor_recall(actor, domain: str) -> tuple:
    """The same recall as raw SQL plus decryption: the cost of the data itself.

    The three reads go the way recall's do (prepared, one round trip, binary rows), so the
    ratio to it measures what recall adds on top: rules, views and payload building.
    """
    from pgstatements.rounds import run
    from prospect_memory.core.crypto import binding, keyring
    from prospect_memory.core.embeddings import get_provider
    from prospect_memory.notes.conf import notes_settings
    from prospect_memory.notes.selectors import NOTE_TABLE

    ring = keyring()
    aid = actor.account.pk
    # The pairs recall reports: the same window, the same model's threshold.
    params = {
        "a": aid,
        "d": domain,
        "window": notes_settings.OVERLAP_PAIR_WINDOW,
        "threshold": get_provider().overlap_distance,
    }
    rows, pairs, (relationship,) = run(
        (_FLOOR_NOTES, params), (_FLOOR_PAIRS, params), (_FLOOR_RELATIONSHIP, params)
    )
    notes = [
        (
            r[0],
            ring.decrypt(
                r[1], context=binding(table=NOTE_TABLE, account_id=aid, row_id=r[0], field="title")
            ),
            ring.decrypt(
                r[2], context=binding(table=NOTE_TABLE, account_id=aid, row_id=r[0], field="body")
            ),
            r[3],
            r[4],
            r[5],
        )
        for r in rows
    ]
    return notes, pairs, relationship


def business_actors():
    """The business memory probe (1,000 entries, read) and a writer account (stores)."""
    from outreach.access import Actor
    from outreach.services import account_create, member_create

    actors = []
    for slug in ("business-probe", "business-writer"):
        account = account_create(slug=slug)
        member = member_create(account=account, email=f"{slug}@bench.example", is_module_admin=True)
        actors.append(Actor.for_member(member))
    return actors


def run(sizes: list[int], iterations: int, business_entries: int) -> tuple[list[dict], list[dict]]:
    from bench import business_bench
    from prospect_memory.notes import answers, pairs
    from prospect_memory.notes.models import Note
    from prospect_memory.notes.payloads import recall_data
    from prospect_memory.notes.selectors import dossier_recall
    from prospect_memory.notes.services.notes import note_save

    rng = random.Random(7)
    probes = seed_probes(rng)
    business_probe, business_writer = business_actors()
    business_keys = business_bench.seed_probe(business_probe, rng)
    timing = (measure, measure_together, percentile)
    business_rows = []
    results = []
    saves = 0
    for position, size in enumerate(sizes):
        t0 = time.perf_counter()
        seed_fillers(rng, size)
        seeded = time.perf_counter() - t0

        def recall(i):
            actor, domain = probes[i % len(probes)]
            data = recall_data(dossier_recall(actor=actor, domain=domain))
            assert data["note_count"] == 50

        def floor(i):
            got = len(floor_recall(*probes[i % len(probes)])[0])
            assert got == 50, got

        def recall_keeping_nothing(i):
            # As a process that kept nothing of the company: every pair and answer made.
            actor, domain = probes[i % len(probes)]
            pairs.forget(pairs.company_key(actor.account.pk, domain))
            answers.forget(actor.account.pk, ids[domain])
            recall(i)

        ids = {
            domain: [n["id"] for n in dossier_recall(actor=actor, domain=domain).note_payloads]
            for actor, domain in probes
        }

        def recall_after_a_change(i):
            # As the first recall after a save: the newest note's pairs and answer made anew.
            actor, domain = probes[i % len(probes)]
            pairs.forget_note(pairs.company_key(actor.account.pk, domain), ids[domain][0])
            answers.forget(actor.account.pk, ids[domain][:1])
            recall(i)

        def save(i):
            nonlocal saves
            actor, domain = probes[i % len(probes)]
            saves += 1
            note_save(
                actor=actor,
                domain=f"new{saves}-{domain}",
                title="Hiring",
                body=body_for(rng, domain),
                source_urls=[f"https://{domain}/jobs/{saves}"],
                observed_at=datetime.now(UTC).date().isoformat(),
            )

        timed = (recall, floor, recall_keeping_nothing, recall_after_a_change)
        for fn in timed:  # warm caches and connections
            measure(fn, 20)
        rec, flo, kept_nothing, changed = measure_together(timed, iterations)
        sav = measure(save, iterations)
        scrape = measure(scrape_figures, max(5, iterations // 20))
        row = {
            "size": Note.objects.count(),
            "seed_s": seeded,
            "recall_p50": statistics.median(rec),
            "recall_p99": percentile(rec, 99),
            "floor_p50": statistics.median(flo),
            "floor_p99": percentile(flo, 99),
            "kept_nothing_p50": statistics.median(kept_nothing),
            "changed_p50": statistics.median(changed),
            "save_p50": statistics.median(sav),
            "save_p99": percentile(sav, 99),
            "scrape_p50": statistics.median(scrape),
        }
        row["ratio"] = row["recall_p50"] / row["floor_p50"]
        row["kept_nothing_ratio"] = row["kept_nothing_p50"] / row["floor_p50"]
        row["changed_ratio"] = row["changed_p50"] / row["floor_p50"]
        results.append(row)
        print(
            f"{row['size']:>9,} notes (seeded in {seeded:.0f}s): recall p50 {row['recall_p50']:.2f} ms "
            f"p99 {row['recall_p99']:.2f} ms | floor p50 {row['floor_p50']:.2f} ms | ratio "
            f"{row['ratio']:.2f} (nothing kept {row['kept_nothing_p50']:.2f} ms, "
            f"{row['kept_nothing_ratio']:.2f}; after a change {row['changed_p50']:.2f} ms, "
            f"{row['changed_ratio']:.2f}) | save p50 {row['save_p50']:.2f} ms p99 {row['save_p99']:.2f} ms"
            f" | /metrics' database figures p50 {row['scrape_p50']:.2f} ms",
            flush=True,
        )
        last = position == len(sizes) - 1
        if position == 0 or last:
            if last and position > 0:
                business_bench.seed_fillers(business_entries, rng)
            label = "alone" if position == 0 else "at_scale"
            business_rows.append(
                business_bench.measure_scale(
                    label, business_probe, business_keys, business_writer, iterations, timing
                )
            )
    return results, business_rows


def report(results: list[dict]) -> None:
    print()
    print(
        "| stored notes | recall p50 | recall p99 | floor p50 | floor p99 | recall / floor "
        "| a process that kept nothing p50 (/ floor) | first recall after a change p50 (/ floor) "
        "| save p50 | save p99 "
        "| scrape's database figures p50 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['size']:,} | {r['recall_p50']:.2f} ms | {r['recall_p99']:.2f} ms | "
            f"{r['floor_p50']:.2f} ms | {r['floor_p99']:.2f} ms | {r['ratio']:.2f}x | "
            f"{r['kept_nothing_p50']:.2f} ms ({r['kept_nothing_ratio']:.2f}x) | "
            f"{r['changed_p50']:.2f} ms ({r['changed_ratio']:.2f}x) | "
            f"{r['save_p50']:.2f} ms | {r['save_p99']:.2f} ms | {r['scrape_p50']:.2f} ms |"
        )
    if len(results) > 1:
        first, last = results[0], results[-1]
        print(
            f"\nrecall p50 at {last['size']:,} / at {first['size']:,}: "
            f"{last['recall_p50'] / first['recall_p50']:.2f}; save p50: "
            f"{last['save_p50'] / first['save_p50']:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="1000,100000,1000000", help="comma-separated note counts"
    )
    parser.add_argument("--iterations", type=int, default=300, help="timed calls per measurement")
    add_provider_argument(parser)
    parser.add_argument(
        "--business-entries",
        type=int,
        default=100_000,
        help="business memory entries across accounts at the largest size",
    )
    args = parser.parse_args()
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(","))
    setup(args)
    from prospect_memory.core.embeddings import get_provider

    print(f"embedding provider: {get_provider().model}")
    notes, business = run(sizes, args.iterations, args.business_entries)
    report(notes)
    from bench import business_bench, integrity_bench

    business_bench.report(business)
    integrity_bench.report(integrity_bench.checks_cost(), integrity_bench.entry_page_cost())


if __name__ == "__main__":
    main()
