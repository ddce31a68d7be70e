"""The notes' settings: their keys of the ``PROSPECT_MEMORY`` dict, merged over ``DEFAULTS``.

The limits of SPEC section 4; every one can be changed per deployment, and every text that
names one is built from here.
"""

from __future__ import annotations

from typing import Any

from prospect_memory.core.conf import AppSettings

DEFAULTS: dict[str, Any] = {
    # Notes.
    "BODY_MAX_BYTES": 10 * 1024,
    "TITLE_MAX_CHARS": 120,
    "SOURCE_URLS_MIN": 1,
    "SOURCE_URLS_MAX": 20,
    "SOURCE_URL_MAX_BYTES": 2 * 1024,
    "OBSERVED_AT_MAX_FUTURE_DAYS": 1,
    # Quotas.
    "DAILY_SAVE_LIMIT": 200,
    "DOMAIN_NOTE_LIMIT": 50,
    # Freshness and housekeeping.
    "STALE_AFTER_DAYS": 30,
    "COMPACTION_SUGGESTED_ABOVE": 8,
    "OVERLAP_PAIR_WINDOW": 20,
    # Companies whose last computed overlap pairs a process keeps (notes.pairs): with a
    # window of 20, at most 190 pairs each, about 78 KB (38 MiB for 512); the pairs grow
    # with the window's square (1,225 for a window of 50). 0 keeps none.
    "OVERLAP_PAIRS_KEPT": 512,
    # What the notes' answers a process keeps from its recalls may take (notes.answers): a
    # full dossier of 50 notes of 1-2 KB takes about 200 KB, so 32 MiB keeps about 160
    # companies' (fewer for longer notes). 0 keeps none. And how long one is kept from when
    # it was made: an erased note leaves every process's memory within that time.
    "NOTE_ANSWERS_KEPT_BYTES": 32 * 1024 * 1024,
    "NOTE_ANSWERS_KEPT_SECONDS": 300,
    "OVERLAP_EXCERPT_CHARS": 300,
    "RECALL_PAYLOAD_MAX_BYTES": 100 * 1024,
    # Listing notes over the API.
    "LIST_PAGE_SIZE": 20,
    "LIST_PAGE_SIZE_MAX": 100,
    "LIST_PAGE_MAX": 1_000_000,
    # The notes' nearest-neighbour index (pgvector HNSW) for knowledge search: accounts with
    # more active notes than KNOWLEDGE_EXACT_MAX_NOTES are searched through it, fewer are
    # compared exactly. With the semantic model's vectors (bench/knowledge_bench.py, 100k
    # notes) the index found 0.996 of the true ten for an account of 20,000 notes, 21%
    # faster than exact search; at 10,000 the planner prefers exact search anyway. Its
    # build parameters, the memory a build may take, and how many candidates a search keeps
    # follow (README, Performance).
    "KNOWLEDGE_EXACT_MAX_NOTES": 15_000,
    "KNOWLEDGE_INDEX_M": 16,
    "KNOWLEDGE_INDEX_EF_CONSTRUCTION": 64,
    "KNOWLEDGE_INDEX_BUILD_MEMORY_MB": 1024,
    "KNOWLEDGE_INDEX_EF_SEARCH": 400,
}


notes_settings = AppSettings("PROSPECT_MEMORY", DEFAULTS)
