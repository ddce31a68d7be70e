"""Vectors at unit length, whatever the size of their components."""

import math

import pytest

from prospect_memory.core.embeddings import normalise


@pytest.mark.parametrize("scale", [1e-170, 1e-30, 1.0, 1e30, 1e300])
def test_any_vector_but_zeros_comes_out_at_unit_length(scale):
    vector = normalise([3.0 * scale, -4.0 * scale, 0.0])
    assert vector == pytest.approx([0.6, -0.8, 0.0], rel=1e-12)
    assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-12)


def test_zeros_stay_zeros_and_ordinary_vectors_are_divided_by_their_length_alone():
    assert normalise([0.0, 0.0]) == [0.0, 0.0]
    values = [0.25, -1.5, 2.0]
    norm = math.sqrt(sum(v * v for v in values))
    assert normalise(values) == [v / norm for v in values]  # bit for bit, as before
