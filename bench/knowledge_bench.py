#!/usr/bin/env python
"""Knowledge search at scale (SPEC 13): the notes' HNSW index against exact search.

Seeds, in bulk (COPY), a probe account of 20,000 notes (``--probe-notes``) in companies of
50, a small account of 300 notes, and filler accounts until the note table holds each size
(100,000, then 1,000,000 notes); every note carries a real vector from the local embedding
provider. At each size it builds the HNSW index (``notes.index.build_index``: concurrently,
timed), then measures, in process and on this machine:

- ``outreach_search_knowledge`` (the operation, both kinds: the probe account also has 300
  promoted business memory entries) through the index (forced: the product searches an
  account of this size exactly, see KNOWLEDGE_EXACT_MAX_NOTES), and the same search exactly
  (every note of the account compared), call by call in turn: p50 and p99;
- recall@10: how many of the exact 10 nearest notes the index returns, over 50 questions;
- the small account, searched as the product does (exactly): p50.

With ``--provider semantic`` (the default a fresh install uses) every note's vector comes
from the local sentence-embedding model, and the notes and questions are sentences built
from many facts, roles, places, products and numbers, so that they differ as real findings
do and the model's neighbourhoods are real ones. With ``--provider hashing`` the text is a
fact and made-up words (a handful of templates would make thousands of notes equally near
any question, and "the 10 nearest" a lottery for any index).

Run: ``scripts/bench-knowledge`` (100k and 1M) or ``--sizes 30000`` (quick). It starts its
own throwaway embedded PostgreSQL unless DATABASE_URL is set.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import knowledge_texts  # noqa: E402
from bench.environment import add_provider_argument, setup  # noqa: E402
from bench.knowledge_texts import QUESTIONS, body_for, question_for  # noqa: E402
from bench.memory_bench import measure_together, percentile  # noqa: E402

PROBE_NOTES = 20_000
#: Promoted business memory of the probe account (a layer holds at most 1,000 entries).
PROMOTED_ENTRIES = 300
SMALL_NOTES = 300
NOTES_PER_DOSSIER = 50


def _fresh_model() -> None:
    """A pool process builds its own model session (one thread) instead of the parent's."""
    from prospect_memory.core.embeddings import local_model

    local_model._runners.clear()


def _vector_texts(texts: list[str]) -> list[str]:
    from prospect_memory.core.embeddings import get_provider

    provider = get_provider()
    vectors = []
    for start in range(0, len(texts), 64):
        vectors += provider.embed_documents(texts[start : start + 64])
    return ["[" + ",".join(f"{v:.6g}" for v in vector) + "]" for vector in vectors]


def copy_notes(plan: list[tuple[int, str, int]], rng: random.Random, pool) -> int:
    """Bulk-load ``(account_id, company, notes)``: a dossier each, its notes with vectors."""
    from django.db import connection

    from prospect_memory.core.crypto import binding, keyring
    from prospect_memory.core.embeddings import get_provider
    from prospect_memory.notes.selectors import NOTE_TABLE

    ring, model, now = keyring(), get_provider().model, datetime.now(UTC)
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(id), 0) FROM prospect_memory_dossier")
        first = cursor.fetchone()[0] + 1
    rows = []
    for offset, (account_id, company, count) in enumerate(plan):
        for k in range(count):
            rows.append((first + offset, account_id, company, k, body_for(rng, company)))
    written = 0
    chunk = 20_000
    with connection.connection.cursor() as cur:
        with cur.copy(
            "COPY prospect_memory_dossier (id, account_id, domain, active_note_count, "
            "created_at, updated_at) FROM STDIN"
        ) as copy:
            for offset, (account_id, company, count) in enumerate(plan):
                copy.write_row((first + offset, account_id, f"{company}.com", count, now, now))
        for start in range(0, len(rows), chunk):
            part = rows[start : start + chunk]
            texts = [f"Finding {k}\n\n{body}" for _, _, _, k, body in part]
            vectors = [v for batch in pool.map(_vector_texts, _split(texts, 8)) for v in batch]
            with cur.copy(
                "COPY prospect_memory_note (id, account_id, dossier_id, title_ciphertext, "
                "body_ciphertext, body_bytes, source_urls, observed_at, created_at, status, "
                "embedding, embedding_model, embedding_status) FROM STDIN"
            ) as copy:
                for (dossier_id, account_id, company, k, body), vector in zip(
                    part, vectors, strict=True
                ):
                    note_id = uuid.uuid4()
                    where = {"table": NOTE_TABLE, "account_id": account_id, "row_id": note_id}
                    copy.write_row(
                        (
                            note_id,
                            account_id,
                            dossier_id,
                            ring.encrypt(f"Finding {k}", context=binding(**where, field="title")),
                            ring.encrypt(body, context=binding(**where, field="body")),
                            len(body.encode()),
                            [f"https://{company}.com/news/{k}"],
                            (now - timedelta(days=rng.randint(0, 90))).date(),
                            now,
                            "active",
                            vector,
                            model,
                            "ready",
                        )
                    )
            written += len(part)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval('prospect_memory_dossier_id_seq', "
            "(SELECT max(id) FROM prospect_memory_dossier))"
        )
    return written


def _split(items: list, parts: int) -> list[list]:
    size = -(-len(items) // parts)
    return [items[i : i + size] for i in range(0, len(items), size)]


def accounts():
    """The probe account (20,000 notes) and the small one (300), with a module admin each."""
    from outreach.access import Actor
    from outreach.services import account_create, member_create

    made = []
    for slug in ("knowledge-probe", "knowledge-small"):
        account = account_create(slug=slug)
        member = member_create(account=account, email=f"admin@{slug}.example", is_module_admin=True)
        made.append(Actor.for_member(member))
    return made


def promote_business_memory(actor, count: int, rng: random.Random) -> int:
    """``count`` confident account entries, stored as agents store them (and so promoted
    into the knowledge index): knowledge search ranks them beside the notes."""
    from prospect_memory.business.models import Promotion
    from prospect_memory.business.services.store import entry_store

    for i in range(count):
        entry_store(
            actor=actor,
            key=f"pattern:{i:04d}",
            value={"rule": body_for(rng, "Our customers")},
            category="insight",
            confidence=80,
        )
    return Promotion.objects.filter(account=actor.account).count()


def filler_plan(missing: int, first_account: int) -> list[tuple[int, str, int]]:
    """Accounts of 1,000 notes (20 companies of 50) until ``missing`` notes are planned."""
    from outreach.services import account_create

    plan, n = [], 0
    while missing > 0:
        account = account_create(slug=f"filler-{first_account + n}")
        for c in range(20):
            count = min(NOTES_PER_DOSSIER, missing)
            if count <= 0:
                break
            plan.append((account.pk, f"co{c}-a{account.pk}", count))
            missing -= count
        n += 1
    return plan


def nearest(actor, question: str, *, exact: bool, limit: int = 10) -> list[tuple[str, float]]:
    from prospect_memory.core.embeddings.budget import embed_within_budget
    from prospect_memory.notes.selectors import notes_nearest

    embedded = embed_within_budget(question, query=True)
    exact_up_to(10**9 if exact else 0)
    near = notes_nearest(
        actor=actor, vector=embedded.vector, model=embedded.model, domain=None, limit=limit
    )
    return [(note.id, distance) for note, distance in near.found]


def exact_up_to(notes: int) -> None:
    """Search accounts of up to ``notes`` notes exactly (the product's setting)."""
    from django.conf import settings

    from prospect_memory.notes.conf import notes_settings

    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "KNOWLEDGE_EXACT_MAX_NOTES": notes}
    notes_settings.reload()


def search_with(exact: bool):
    """Knowledge search for the probe account as an agent calls it (the operation: both
    kinds, the hits' companies and stop flags, the usage row), through the index
    (``exact``: without)."""
    from prospect_memory.knowledge.operations import SEARCH

    def search(actor, question: str):
        exact_up_to(10**9 if exact else 0)
        return SEARCH.run(actor, {"query": question, "limit": 10})

    return search


def plan_uses_index(actor) -> bool:
    from django.db import connection

    from prospect_memory.core.embeddings.budget import embed_within_budget
    from prospect_memory.notes.selectors import _indexed_statement

    embedded = embed_within_budget(QUESTIONS[0], query=True)
    sql = _indexed_statement(embedded.model, len(embedded.vector))
    with connection.cursor() as cursor:
        cursor.execute("SET hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            "EXPLAIN " + sql,
            {
                "vector": "[" + ",".join(map(str, embedded.vector)) + "]",
                "account": actor.account.pk,
                "limit": 10,
            },
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    return "note_knn_" in plan


def measure_size(size: int, probe, small, iterations: int) -> dict:
    from django.db import connection

    from prospect_memory.core.embeddings import get_provider
    from prospect_memory.notes.index import build_index

    with connection.cursor() as cursor:  # as autovacuum would have, after bulk loading
        cursor.execute("VACUUM ANALYZE prospect_memory_note")
        cursor.execute("VACUUM ANALYZE prospect_memory_dossier")
    build_seconds = build_index(get_provider())
    rng = random.Random(size)
    questions = [question_for(rng) for _ in range(50)]
    recalls = []
    for question in questions:
        exact = nearest(probe, question, exact=True)
        found = nearest(probe, question, exact=False)
        # Tie-aware: a note as near as the 10th exact neighbour counts (equally near notes
        # may be told apart by id in one answer and not in the other).
        tenth = exact[-1][1] + 1e-9
        recalls.append(sum(d <= tenth for _, d in found[: len(exact)]) / max(len(exact), 1))
    indexed, exact = search_with(False), search_with(True)
    for i in range(20):  # warm-up
        indexed(probe, questions[i % len(questions)])
        exact(probe, questions[i % len(questions)])
    fast, slow = measure_together(
        [
            lambda i: indexed(probe, questions[i % len(questions)]),
            lambda i: exact(probe, questions[i % len(questions)]),
        ],
        iterations,
    )
    near_fast, near_slow = measure_together(
        [
            lambda i: nearest(probe, questions[i % len(questions)], exact=False),
            lambda i: nearest(probe, questions[i % len(questions)], exact=True),
        ],
        iterations,
    )
    [small_samples] = measure_together(
        [lambda i: exact(small, questions[i % len(questions)])], iterations
    )
    return {
        "size": size,
        "build_seconds": build_seconds,
        "uses_index": plan_uses_index(probe),
        "p50": statistics.median(fast),
        "p99": percentile(fast, 99),
        "exact_p50": statistics.median(slow),
        "exact_p99": percentile(slow, 99),
        "recall": statistics.mean(recalls),
        "recall_min": min(recalls),
        "questions_under_half": sum(r < 0.5 for r in recalls),
        "small_p50": statistics.median(small_samples),
        "nearest_p50": statistics.median(near_fast),
        "nearest_exact_p50": statistics.median(near_slow),
    }


def drop_index() -> None:
    from django.db import connection

    from prospect_memory.core.embeddings import get_provider
    from prospect_memory.notes.index import index_name

    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX IF EXISTS "{index_name(get_provider().model)}"')


def run(sizes: list[int], iterations: int, probe_notes: int = PROBE_NOTES) -> list[dict]:
    from prospect_memory.notes.models import Note

    rng = random.Random(13)
    probe, small = accounts()
    started = time.monotonic()
    promoted = promote_business_memory(probe, PROMOTED_ENTRIES, rng)
    print(f"{promoted} business memory entries promoted in {time.monotonic() - started:.0f}s")
    results = []
    with multiprocessing.get_context("fork").Pool(2, initializer=_fresh_model) as pool:
        drop_index()  # loading into an indexed table is slow; it is built again per size
        companies = probe_notes // NOTES_PER_DOSSIER
        plan = [(probe.account.pk, f"probe{c}", NOTES_PER_DOSSIER) for c in range(companies)]
        plan += [(small.account.pk, f"small{c}", NOTES_PER_DOSSIER) for c in range(6)]
        started = time.monotonic()
        copy_notes(plan, rng, pool)
        print(f"probe accounts seeded in {time.monotonic() - started:.0f}s", flush=True)
        for size in sizes:
            missing = size - Note.objects.count()
            if missing > 0:
                drop_index()
                started = time.monotonic()
                copy_notes(filler_plan(missing, size), rng, pool)
                print(f"{size:,} notes seeded in {time.monotonic() - started:.0f}s", flush=True)
            result = measure_size(size, probe, small, iterations)
            print(result, flush=True)
            results.append(result)
    return results


def report(results: list[dict]) -> None:
    print(
        "\n| notes in table | index build | index used | knowledge search p50 / p99 "
        "| exact p50 / p99 | recall@10 (min; questions < 0.5) | small account p50 |"
    )
    print("|---:|---:|:---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['size']:,} | {r['build_seconds']:.0f} s | {'yes' if r['uses_index'] else 'no'} "
            f"| {r['p50']:.2f} / {r['p99']:.2f} ms | {r['exact_p50']:.2f} / {r['exact_p99']:.2f} ms "
            f"| {r['recall']:.3f} ({r['recall_min']:.1f}; {r['questions_under_half']} of 50) "
            f"| {r['small_p50']:.2f} ms |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated note counts")
    parser.add_argument("--iterations", type=int, default=200, help="timed calls per measurement")
    parser.add_argument(
        "--probe-notes", type=int, default=PROBE_NOTES, help="notes of the account searched"
    )
    add_provider_argument(parser)
    args = parser.parse_args()
    knowledge_texts.SENTENCES = args.provider != "hashing"
    sizes = sorted(int(s.replace("_", "")) for s in args.sizes.split(","))
    setup(args)
    from django.conf import settings

    from prospect_memory.notes.conf import notes_settings

    # An index of 1M vectors builds in memory with a few GB (the machine has 24).
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "KNOWLEDGE_INDEX_BUILD_MEMORY_MB": 6144}
    notes_settings.reload()
    from prospect_memory.core.embeddings import get_provider

    print(f"embedding provider: {get_provider().model}", flush=True)
    report(run(sizes, args.iterations, args.probe_notes))


if __name__ == "__main__":
    main()
