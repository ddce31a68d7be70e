"""Fitting thresholds (``core/embeddings/calibration.py``): F-beta, the held-out split, the merge
distance, on pairs whose distances the test chooses (no model)."""

import pytest

from prospect_memory.core.embeddings import calibration
from prospect_memory.core.embeddings.calibration import Pair, best, calibrate, score

#: Distances each class of pair is given, by split: the held-out pairs lie where no
#: threshold fitted on the dev pairs would put them.
DISTANCES = {
    "dev": {"restated": 0.1, "paraphrase": 0.3, "same_topic": 0.5, "unrelated": 0.7},
    "holdout": {"restated": 0.95, "paraphrase": 0.95, "same_topic": 0.01, "unrelated": 0.01},
}


def pairs() -> list[Pair]:
    made = []
    for split, by_kind in DISTANCES.items():
        for kind in by_kind:
            for n in range(6):
                text = f"{split}|{kind}|{n}"
                made.append(Pair(text, "en", kind, {"body": text}, {"body": text + "|b"}, split))
    return made


def embed(texts: list[str]) -> list[list[float]]:
    """Unit vectors whose cosine distance to the pair's other side is the class's own."""
    import math

    vectors = []
    for text in texts:
        split, kind, _n, *other = text.split("|")
        d = DISTANCES[split][kind] + int(_n) * 0.001
        angle = math.acos(1 - d) if other else 0.0
        vectors.append([math.cos(angle), math.sin(angle)])
    return vectors


def test_precision_weighs_more_with_a_beta_below_one():
    measured = [(0.1, "restated"), (0.2, "restated"), (0.3, "unrelated"), (0.4, "restated")]
    measured += [(0.5 + i / 100, "unrelated") for i in range(20)]
    f1 = best(measured, frozenset({"restated"}))
    f05 = best(measured, frozenset({"restated"}), beta=0.5)
    assert f05.threshold < f1.threshold
    assert f05.precision == 1.0


def test_held_out_pairs_never_move_the_thresholds():
    report = calibrate(
        pairs(), model="m", embed=embed, text_of=lambda note: note["body"], current=(0.1, 0.3)
    )
    assert report.best["near_duplicate"].threshold == pytest.approx(0.4, abs=0.01)
    assert report.best["overlap"].threshold == pytest.approx(0.6, abs=0.01)
    # Merges take in restated pairs only, never a paraphrase.
    assert report.best["merge"].threshold == pytest.approx(0.2, abs=0.01)
    seen = report.seen["holdout"]["en"]
    assert seen["restated"][1] == 0.0  # the held-out restated pairs lie far: not found
    assert seen["same_topic"][0] == 1.0
    assert score([(0.1, "restated")], calibration.MERGE, 0.2).recall == 1.0
