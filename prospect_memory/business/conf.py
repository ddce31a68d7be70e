"""Business memory's settings: one ``BUSINESS_MEMORY`` dict merged over ``DEFAULTS``.

The limits of SPEC section 12; every text that names one is built from here.
"""

from __future__ import annotations

from typing import Any

from prospect_memory.core.conf import AppSettings

DEFAULTS: dict[str, Any] = {
    # Entries.
    "KEY_MAX_CHARS": 100,
    "VALUE_MAX_BYTES": 16 * 1024,
    "VALUE_MAX_DEPTH": 32,
    "SOURCE_ID_MAX_CHARS": 200,
    # How far in the future source.extracted_at may be (clocks differ).
    "EXTRACTED_AT_SLACK_SECONDS": 300,
    "CONFIDENCE_DEFAULT": 50,
    "TTL_MIN_SECONDS": 60,
    "TTL_MAX_SECONDS": 366 * 24 * 3600,
    # Capacity of a layer; past it the lowest-confidence live entry is evicted.
    "ACCOUNT_CAPACITY": 1000,
    "MEMBER_CAPACITY": 200,
    # History and retention.
    "HISTORY_VERSIONS": 20,
    # Evicted and expired entries are kept this long for restore, then purged; a layer
    # keeps at most as many of them as its capacity (the oldest go first).
    "RETIRED_KEEP_DAYS": 30,
    # Pages: an entry page compares consecutive versions inline until this many lines of
    # formatted JSON have been compared (then each pair on its own page), and a comparison
    # shows at most COMPARE_SHOWN_MAX_LINES lines: whatever the values, a page costs
    # milliseconds (scripts/bench, "entry page, worst case").
    "PAGE_COMPARE_MAX_LINES": 2000,
    # Values of up to this many bytes of compact JSON are shown indented on pages; larger
    # ones as stored.
    "PAGE_PRETTY_MAX_BYTES": 4096,
    "COMPARE_SHOWN_MAX_LINES": 500,
    # Writing. A store's answer needs no vector: with a Celery broker, and a provider that
    # takes time (the local model, a remote API), a store answers first and a worker makes
    # the vector moments later (a search meanwhile matches the entry on its key and counts
    # it in not_compared). False: a store waits for its vector, as it does without a broker.
    "EMBED_AFTER_ANSWER": True,
    # Reading.
    "LIST_LIMIT_DEFAULT": 20,
    "LIST_LIMIT_MAX": 100,
    "SEARCH_LIMIT_MAX": 20,
    "SEARCH_QUERY_MAX_CHARS": 1000,
    # Cosine distance at or below which a search result counts as related; None: rank only.
    "SEARCH_MAX_DISTANCE": None,
    # Knowledge index (SPEC 13): account entries of at least this confidence are promoted.
    "PROMOTE_MIN_CONFIDENCE": 70,
    # Consolidation (SPEC 13): an entry neither read nor written for IDLE_DAYS loses
    # DEMOTE_POINTS of confidence per full period; two live entries of one layer and
    # category within MERGE_DISTANCE (cosine) are merged. None: the embedding model's own
    # merge distance (core/embeddings/thresholds.json, from calibration), as every distance
    # should be.
    "CONSOLIDATION_IDLE_DAYS": 30,
    "CONSOLIDATION_DEMOTE_POINTS": 10,
    "CONSOLIDATION_MERGE_DISTANCE": None,
}

business_settings = AppSettings("BUSINESS_MEMORY", DEFAULTS)
