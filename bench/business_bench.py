"""Business memory at scale, the part of ``scripts/bench`` after the notes.

At each measured scale (a probe account of 1,000 entries alone, then the same among
100,000 entries of many accounts and the notes table at its largest), in process:

- ``entry_store`` of new keys with the local embedding provider (embedding included);
- ``entry_recall`` by key, and its floor: one prepared statement that finds the entry,
  counts the access (committed without waiting for the disk, as recall's count is) and
  returns the ciphertext, plus decryption and JSON decoding;
- ``entries_list`` of 20;
- ``entries_search`` over the probe account's 1,000 entries;
- updates of an existing key with each strategy (overwrite, append, increment, max, min),
  each its own 15 keys in turn, printed on a line of their own.
"""

from __future__ import annotations

import json
import random
import statistics
import uuid
from datetime import UTC, datetime

PROBE_ENTRIES = 1000
KEY_WORDS = ["icp", "rubric", "voice", "catalog", "pattern", "region", "segment", "offer"]
QUERIES = [
    "which industries fit our ideal customer profile",
    "how do we score a deal",
    "banned phrases in our brand voice",
    "price of the team plan",
    "what worked for subject lines in DACH",
]

# The count commits without waiting for the disk, as recall's does.
_FLOOR_RECALL = """
WITH unflushed AS (SELECT set_config('synchronous_commit', 'off', true))
UPDATE business_memory_entry
   SET access_count = access_count + 1, last_accessed_at = now()
  FROM unflushed
 WHERE account_id = %(a)s AND layer = 'account' AND key = %(k)s AND status = 'live'
RETURNING id::text, value_ciphertext
"""


def value_for(rng: random.Random, i: int) -> dict:
    return {
        "summary": f"{rng.choice(KEY_WORDS)} note {i}: "
        + " ".join(rng.choice(KEY_WORDS) for _ in range(12)),
        "weights": [round(rng.random(), 3) for _ in range(4)],
        "tags": rng.sample(KEY_WORDS, 3),
    }


def copy_entries(rows: list[tuple], vectors: list[list[float]], model: str) -> None:
    """Bulk-load ``(account_id, key, value)`` rows as live account entries with vectors."""
    from django.db import connection

    from prospect_memory.business.models import Entry
    from prospect_memory.core.crypto import seal

    table = Entry._meta.label_lower
    now = datetime.now(UTC)
    with (
        connection.connection.cursor() as cur,
        cur.copy(
            "COPY business_memory_entry (id, account_id, layer, key, value_ciphertext, value_bytes, "
            "category, confidence, source_pipeline_id, source_execution_id, source_step_id, "
            "written_by_label, version, strategy, created_at, updated_at, access_count, status, "
            "embedding, embedding_model, embedding_status) FROM STDIN"
        ) as copy,
    ):
        for n, (account_id, key, value) in enumerate(rows):
            entry_id = uuid.uuid4()
            text = json.dumps(value, separators=(",", ":"))
            vector = vectors[n % len(vectors)]
            copy.write_row(
                (
                    entry_id,
                    account_id,
                    "account",
                    key,
                    seal(
                        text,
                        table=table,
                        account_id=account_id,
                        row_id=entry_id,
                        field="value_json",
                    ),
                    len(text),
                    "fact",
                    n % 101,
                    "",
                    "",
                    "",
                    "bench",
                    1,
                    "overwrite",
                    now,
                    now,
                    0,
                    "live",
                    "[" + ",".join(f"{v:.6f}" for v in vector) + "]",
                    model,
                    "ready",
                )
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE business_memory_entry")


def seed_probe(actor, rng: random.Random) -> list[str]:
    """The probe account's 1,000 entries, each with its own vector; returns the keys."""
    from prospect_memory.business.rules import embedding_input
    from prospect_memory.core.embeddings import get_provider

    provider = get_provider()
    keys = [f"{rng.choice(KEY_WORDS)}:{i:04d}" for i in range(PROBE_ENTRIES)]
    values = [value_for(rng, i) for i in range(PROBE_ENTRIES)]
    vectors = provider.embed_documents(
        [embedding_input(k, "fact", v) for k, v in zip(keys, values, strict=True)]
    )
    rows = [(actor.account.pk, k, v) for k, v in zip(keys, values, strict=True)]
    copy_entries(rows, vectors, provider.model)  # one vector per row, in order
    return keys


def seed_fillers(target: int, rng: random.Random) -> None:
    """Entries of the filler accounts until the table holds ``target`` rows."""
    from outreach.models import Account
    from prospect_memory.business.models import Entry
    from prospect_memory.core.embeddings import get_provider

    missing = target - Entry.objects.count()
    if missing <= 0:
        return
    provider = get_provider()
    sample = [value_for(rng, i) for i in range(200)]
    vectors = provider.embed_documents([json.dumps(v) for v in sample])
    accounts = list(
        Account.objects.filter(slug__startswith="filler-").values_list("pk", flat=True)[:400]
    )
    per_account = -(-missing // len(accounts))
    rows = []
    for account_id in accounts:
        for i in range(min(per_account, missing - len(rows))):
            rows.append((account_id, f"filler:{i:04d}", sample[i % len(sample)]))
    copy_entries(rows, vectors, provider.model)


def floor_recall(actor, key: str):
    from pgstatements.rounds import run_one
    from prospect_memory.business.models import Entry
    from prospect_memory.core.crypto import keyring, unseal

    ((entry_id, token),) = run_one(_FLOOR_RECALL, {"a": actor.account.pk, "k": key})
    text = unseal(
        token,
        table=Entry._meta.label_lower,
        account_id=actor.account.pk,
        row_id=entry_id,
        field="value_json",
        ring=keyring(),
    )
    return json.loads(text)


def operations(label: str, probe, keys: list[str], writer) -> dict:
    """The timed calls of one scale, by name: ``recall``, ``floor``, ``list``, ``search``,
    ``store`` (new keys) and ``updates`` (strategy: call). Shared with the peers' side by
    side in lockstep (``bench/peers_lockstep.py``)."""
    from prospect_memory.business.selectors.listing import entries_list
    from prospect_memory.business.selectors.recall import entry_recall
    from prospect_memory.business.selectors.search import entries_search
    from prospect_memory.business.services.store import entry_store

    rng = random.Random(11)
    stores = {"n": 0}

    def recall(i):
        assert entry_recall(actor=probe, key=keys[i % len(keys)]).found

    def floor(i):
        floor_recall(probe, keys[i % len(keys)])

    def listing(i):
        page = entries_list(actor=probe, limit=20)
        assert len(page.entries) == 20

    def search(i):
        found = entries_search(actor=probe, query=QUERIES[i % len(QUERIES)], limit=20)
        assert found.results

    def store(i):
        stores["n"] += 1
        result = entry_store(
            actor=writer,
            key=f"{label}:learned:{stores['n']}",
            value=value_for(rng, stores["n"]),
            category="insight",
            confidence=60,
            source={"pipeline_id": "bench", "execution_id": label},
        )
        assert result.created

    def update(strategy: str, first, value):
        """Timed: a write of ``value(i)`` with ``strategy`` to one of 15 keys made with
        ``first`` (each strategy its own keys)."""

        def write(i):
            result = entry_store(
                actor=writer,
                key=f"{label}:{strategy}:{i % 15}",
                value=value(i),
                strategy=strategy,
                category="insight",
                confidence=60,
            )
            assert not result.created

        for i in range(15):
            entry_store(actor=writer, key=f"{label}:{strategy}:{i}", value=first)
        return write

    updates = {
        "overwrite": update("overwrite", {}, lambda i: value_for(rng, i)),
        "append": update("append", [], lambda i: i),
        "increment": update("increment", 0, lambda i: 1),
        "max": update("max", 0, lambda i: i),
        "min": update("min", 0, lambda i: -i),
    }
    return {
        "recall": recall,
        "floor": floor,
        "list": listing,
        "search": search,
        "store": store,
        "updates": updates,
    }


def measure_scale(label: str, probe, keys: list[str], writer, iterations: int, timing) -> dict:
    """One row of the table: every operation at this scale."""
    from prospect_memory.business.models import Entry
    from prospect_memory.notes.models import Note

    measure, measure_together, percentile = timing
    ops = operations(label, probe, keys, writer)
    recall, floor, listing, search, store = (
        ops[name] for name in ("recall", "floor", "list", "search", "store")
    )
    updates = ops["updates"]
    for fn in (recall, floor, listing, search, store, *updates.values()):
        measure(fn, 20)
    rec, flo = measure_together((recall, floor), iterations)
    lst = measure(listing, iterations)
    sea = measure(search, iterations)
    sto = measure(store, iterations)
    upd = {strategy: statistics.median(measure(fn, iterations)) for strategy, fn in updates.items()}
    row = {
        "label": label,
        "entries": Entry.objects.count(),
        "notes": Note.objects.count(),
        "store_p50": statistics.median(sto),
        "store_p99": percentile(sto, 99),
        "recall_p50": statistics.median(rec),
        "recall_p99": percentile(rec, 99),
        "floor_p50": statistics.median(flo),
        "list_p50": statistics.median(lst),
        "list_p99": percentile(lst, 99),
        "search_p50": statistics.median(sea),
        "search_p99": percentile(sea, 99),
    }
    row["ratio"] = row["recall_p50"] / row["floor_p50"]
    print(
        f"business memory ({label}): {row['entries']:,} entries, {row['notes']:,} notes | "
        f"store p50 {row['store_p50']:.2f} ms | recall p50 {row['recall_p50']:.2f} ms "
        f"(floor {row['floor_p50']:.2f} ms, {row['ratio']:.2f}x) | list p50 "
        f"{row['list_p50']:.2f} ms | search p50 {row['search_p50']:.2f} ms",
        flush=True,
    )
    print(
        f"business memory ({label}) updates of an existing key, p50: "
        + " | ".join(f"{strategy} {p50:.2f} ms" for strategy, p50 in upd.items()),
        flush=True,
    )
    row["updates"] = upd
    return row


def report(rows: list[dict]) -> None:
    print()
    print(
        "| entries in table | notes in table | store p50 / p99 | recall p50 / p99 | "
        "recall floor p50 | recall / floor | list of 20 p50 / p99 | search of 1,000 p50 / p99 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['entries']:,} | {r['notes']:,} | {r['store_p50']:.2f} / {r['store_p99']:.2f} ms "
            f"| {r['recall_p50']:.2f} / {r['recall_p99']:.2f} ms | {r['floor_p50']:.2f} ms | "
            f"{r['ratio']:.2f}x | {r['list_p50']:.2f} / {r['list_p99']:.2f} ms | "
            f"{r['search_p50']:.2f} / {r['search_p99']:.2f} ms |"
        )
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        ratios = ", ".join(
            f"{name} {last[f'{name}_p50'] / first[f'{name}_p50']:.2f}"
            for name in ("store", "recall", "list", "search")
        )
        print(f"\np50 at {last['entries']:,} entries / at {first['entries']:,}: {ratios}")
