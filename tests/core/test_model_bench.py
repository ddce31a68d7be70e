"""A smoke test of ``bench/model_bench.py``: each of its measures runs on a few notes, so
the script that the docs' model figures come from cannot silently break."""

import pytest

from bench import model_bench

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("model", list(model_bench.MODELS))
def test_every_measure_of_the_model_bench_runs(model):
    (start,) = model_bench.cold_start(model, runs=1)
    assert start["first_vector"] > 0
    assert start["rss_after"] > start["rss_before"]
    times = model_bench.per_note(model, 1, batch=2, iterations=2)
    assert len(times) == 2
    assert all(t > 0 for t in times)
    assert model_bench.backfill_pace(model, 16) > 0
    assert model_bench.files_size(model) > 0
