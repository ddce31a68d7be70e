"""bench/integrity_bench.py still runs (its figures are the README's): every group of the
checks' costs is measured, over the items it names."""

import pytest

from bench.integrity_bench import checks_cost

# A benchmark's own run: seconds (the slow marker).
pytestmark = pytest.mark.slow


def test_the_integrity_bench_measures_every_group():
    costs = checks_cost(rounds=1, alone=1)
    assert {"clean notes", "poisoned notes"} <= costs.keys()
    assert any("spelled" in name for name in costs)
    for name, (p50, p99, items) in costs.items():
        assert 0 < p50 <= p99, name
        assert items >= 1, name
