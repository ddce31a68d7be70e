"""``bench/model_memory.py`` (``scripts/bench-model-memory``) still runs, at its smallest:
one worker, every set-up (the local embedding service too), a few saves and embeddings,
with the real model, on a throwaway database of its own. Its figures are in
docs/operations.md ("The model once per machine"); this only keeps it from breaking."""

import pytest

from tests.bench.conftest import run_bench

pytestmark = pytest.mark.slow


def test_the_model_memory_benchmark_runs(short_tmp):
    done = run_bench(
        short_tmp,
        "model_memory.py",
        *("--workers", "1", "--runs", "1", "--saves", "3", "--calls", "3"),
        timeout=600,
    )
    for setup in ("per-worker", "preload", "preload-prepack", "service"):
        assert f"| {setup} | 1 |" in done.stdout
    assert "| the weights as they lie (per-worker, preload) |" in done.stdout
