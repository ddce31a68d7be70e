"""Calibration of an embedding model's distances on labelled pairs of notes (SPEC 14).

Each pair is in one of four classes: the same finding restated (``restated``), the same
fact in other words (``paraphrase``), the same topic but another fact (``same_topic``), an
unrelated fact about the same company (``unrelated``), in one language (``en``) or across
two (``en-de``: its first note in English, its second in German). A near duplicate is the
same finding, restated or in other words; an overlap is that or another fact on the same
topic (SPEC 17). For a model, the report gives each class's distances by language, the
precision, recall and F1 of both thresholds as they stand and at their best (on the pairs
fitted: the highest F1 for near duplicates, F0.5 for overlaps, F0.5 on restated pairs for
consolidation's merges), and what an agent sees per language: how often each class comes
back as a near duplicate or an overlap.

Each pair belongs to a split: ``dev`` pairs fit the thresholds, ``holdout`` pairs are only
ever measured, so the report says how the thresholds do on pairs they were not fitted on.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The labelled pairs that ship with Kit.
SHIPPED_PAIRS = Path(__file__).parents[1] / "datasets" / "calibration_pairs.jsonl"

CLASSES = ("restated", "paraphrase", "same_topic", "unrelated")
SPLITS = ("dev", "holdout")
#: How much more precision weighs than recall when the overlap threshold is fitted.
OVERLAP_BETA = 0.5
#: What each threshold should catch.
NEAR_DUPLICATE = frozenset({"restated", "paraphrase"})
OVERLAP = frozenset({"restated", "paraphrase", "same_topic"})
#: What consolidation may merge on its own: the same finding restated, never a paraphrase
#: that may hold a nuance, let alone another fact (an entry merged becomes an alias).
MERGE = frozenset({"restated"})


@dataclass(frozen=True)
class Pair:
    id: str
    language: str
    kind: str
    a: dict[str, Any]
    b: dict[str, Any]
    split: str = "dev"


def load_pairs(path: Path = SHIPPED_PAIRS) -> list[Pair]:
    """The pairs of a JSON-lines file, each checked; ValueError names the line and field."""
    pairs, seen = [], set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object")
        for name in ("id", "language"):
            if not isinstance(row.get(name), str) or not row[name]:
                raise ValueError(f"{where}: {name} must be text")
        if row["id"] in seen:
            raise ValueError(f"{where}: the id {row['id']!r} is used twice")
        seen.add(row["id"])
        if row.get("class") not in CLASSES:
            raise ValueError(f"{where}: class must be one of {', '.join(CLASSES)}")
        if row.get("split", "dev") not in SPLITS:
            raise ValueError(f"{where}: split must be one of {', '.join(SPLITS)}")
        for side in ("a", "b"):
            note = row.get(side)
            if (
                not isinstance(note, dict)
                or not isinstance(note.get("body"), str)
                or not note["body"].strip()
                or not isinstance(note.get("title", ""), str)
            ):
                raise ValueError(f"{where}: {side} must be a note: an object with a body text")
        pairs.append(
            Pair(
                row["id"],
                row["language"],
                row["class"],
                row["a"],
                row["b"],
                row.get("split", "dev"),
            )
        )
    return pairs


@dataclass(frozen=True)
class Score:
    threshold: float
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        return self.f_beta(1.0)

    def f_beta(self, beta: float) -> float:
        """F-beta: below 1 precision weighs more, above 1 recall."""
        weighted = beta**2 * self.precision + self.recall
        return (1 + beta**2) * self.precision * self.recall / weighted if weighted else 0.0


def score(
    measured: list[tuple[float, str]], positive: frozenset[str], threshold: float
) -> Score | None:
    """How well "distance at or below ``threshold``" finds the ``positive`` classes; None
    when the pairs hold none of them (nothing to find, nothing to say)."""
    caught = [kind for distance, kind in measured if distance <= threshold]
    hits = sum(kind in positive for kind in caught)
    wanted = sum(kind in positive for _, kind in measured)
    if not wanted:
        return None
    return Score(
        threshold=threshold,
        precision=hits / len(caught) if caught else 1.0,
        recall=hits / wanted,
    )


class TooFewPairs(ValueError):
    """The pairs cannot decide a threshold: which is missing."""


#: Fewest pairs best thresholds are fitted on.
MIN_FITTED = 20


def best(measured: list[tuple[float, str]], positive: frozenset[str], beta: float = 1.0) -> Score:
    """The threshold with the highest F-beta (F1 by default; below 1 precision weighs
    more), halfway between two neighbouring measured distances (ties: the lowest), to three
    decimals. TooFewPairs unless the pairs hold both what the threshold should catch and
    what it should not."""
    wanted = sum(kind in positive for _, kind in measured)
    if len(measured) < MIN_FITTED or not 0 < wanted < len(measured):
        raise TooFewPairs(
            f"fitting {'/'.join(sorted(positive))} needs at least {MIN_FITTED} pairs, some of "
            f"them {'/'.join(sorted(positive))} and some not; the pairs fitted on hold "
            f"{len(measured)}, {wanted} of them {'/'.join(sorted(positive))}"
        )
    distances = sorted({round(d, 4) for d, _ in measured})
    candidates = [(a + b) / 2 for a, b in itertools.pairwise(distances)]
    scored = [s for c in candidates if (s := score(measured, positive, round(c, 3)))]
    top = max(s.f_beta(beta) for s in scored)
    return next(s for s in scored if math.isclose(s.f_beta(beta), top))


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]

    return {"min": ordered[0], "p10": at(0.1), "p50": at(0.5), "p90": at(0.9), "max": ordered[-1]}


@dataclass
class Report:
    model: str
    pairs: int
    fitted_on: str
    #: Distances by class, and by language then class.
    by_class: dict[str, dict[str, float]] = field(default_factory=dict)
    by_language: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    current: dict[str, Score | None] = field(default_factory=dict)
    best: dict[str, Score] = field(default_factory=dict)
    #: The best thresholds' scores on each language's pairs (None: nothing to find there).
    per_language: dict[str, dict[str, Score | None]] = field(default_factory=dict)
    #: What an agent sees with the best thresholds, per split, then language, then class:
    #: the share of pairs that come back as a near duplicate, and as either.
    seen: dict[str, dict[str, dict[str, tuple[float, float, int]]]] = field(default_factory=dict)


def calibrate(
    pairs: list[Pair],
    *,
    model: str,
    embed: Callable[[list[str]], list[list[float]]],
    text_of: Callable[[dict[str, Any]], str],
    current: tuple[float, float],
    fit_languages: Iterable[str] | None = None,
    fit_splits: Iterable[str] = ("dev",),
    batch: int = 64,
) -> Report:
    """Embed both sides of every pair with ``embed`` and measure; the best thresholds are
    fitted on the pairs of ``fit_splits`` in ``fit_languages`` (every language when None).
    TooFewPairs if those pairs cannot decide them."""
    texts = sorted({text_of(side) for pair in pairs for side in (pair.a, pair.b)})
    vectors: dict[str, list[float]] = {}
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        vectors.update(zip(chunk, embed(chunk), strict=True))
    distance = {
        pair.id: 1.0
        - sum(
            x * y for x, y in zip(vectors[text_of(pair.a)], vectors[text_of(pair.b)], strict=True)
        )
        for pair in pairs
    }
    chosen = set(fit_languages) if fit_languages else None
    splits = set(fit_splits)
    fitted = [p for p in pairs if (chosen is None or p.language in chosen) and p.split in splits]
    measured = [(distance[p.id], p.kind) for p in fitted]
    languages = "every language" if chosen is None else ", ".join(sorted(chosen))
    report = Report(
        model=model,
        pairs=len(pairs),
        fitted_on=f"the {'/'.join(sorted(splits))} pairs of {languages} ({len(fitted)})",
    )
    for kind in CLASSES:
        found = [distance[p.id] for p in pairs if p.kind == kind]
        if found:
            report.by_class[kind] = percentiles(found)
    for language in sorted({p.language for p in pairs}):
        report.by_language[language] = {
            kind: percentiles(found)
            for kind in CLASSES
            if (
                found := [
                    distance[p.id] for p in pairs if p.language == language and p.kind == kind
                ]
            )
        }
    near_now, overlap_now = current
    report.current = {
        "near_duplicate": score(measured, NEAR_DUPLICATE, near_now),
        "overlap": score(measured, OVERLAP, overlap_now),
    }
    near = best(measured, NEAR_DUPLICATE)
    # An overlap hands the agent another note to read: one that is not related costs it a
    # read and its trust in the bucket, so precision weighs more there (F0.5).
    overlap = best(measured, OVERLAP, beta=OVERLAP_BETA)
    if overlap.threshold < near.threshold:
        at_near = score(measured, OVERLAP, near.threshold)
        assert at_near is not None  # best() found overlap pairs among them
        overlap = at_near
    merge = best(measured, MERGE, beta=OVERLAP_BETA)
    report.best = {
        "near_duplicate": near,
        "overlap": overlap,
        "merge": merge if merge.threshold <= near.threshold else near,
    }
    for language in sorted({p.language for p in pairs}):
        mine = [(distance[p.id], p.kind) for p in pairs if p.language == language]
        report.per_language[language] = {
            "near_duplicate": score(mine, NEAR_DUPLICATE, near.threshold),
            "overlap": score(mine, OVERLAP, overlap.threshold),
        }
    for split in SPLITS:
        for language in sorted({p.language for p in pairs if p.split == split}):
            for kind in CLASSES:
                found = [
                    distance[p.id]
                    for p in pairs
                    if p.split == split and p.language == language and p.kind == kind
                ]
                if found:
                    report.seen.setdefault(split, {}).setdefault(language, {})[kind] = (
                        sum(d <= near.threshold for d in found) / len(found),
                        sum(d <= overlap.threshold for d in found) / len(found),
                        len(found),
                    )
    return report


def markdown(report: Report) -> str:
    """The report as the tables docs/embeddings.md shows."""
    lines = [
        f"### {report.model}",
        "",
        f"{report.pairs} pairs; best thresholds fitted on {report.fitted_on}.",
        "",
        "| class | min | p10 | p50 | p90 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind, spread in report.by_class.items():
        lines.append(f"| {kind} | " + " | ".join(f"{v:.3f}" for v in spread.values()) + " |")
    lines += [
        "",
        "| threshold | value | precision | recall | F1 |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, scores in (("in force", report.current), ("best", report.best)):
        for name, s in scores.items():
            if s is not None:
                lines.append(
                    f"| {name.replace('_', ' ')} ({label}) | {s.threshold:.3f} | "
                    f"{s.precision:.2f} | {s.recall:.2f} | {s.f1:.2f} |"
                )
    lines += [
        "",
        "| language | restated p50 | paraphrase p50 | same topic p50 | unrelated p50 | "
        "near dup. P / R | overlap P / R |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for language, found in report.by_language.items():
        cells = [f"{found[k]['p50']:.3f}" if k in found else "" for k in CLASSES]
        scores = report.per_language[language]

        def shown(s: Score | None) -> str:
            return f"{s.precision:.2f} / {s.recall:.2f}" if s is not None else "-"

        lines.append(
            f"| {language} | {' | '.join(cells)} | {shown(scores['near_duplicate'])} | "
            f"{shown(scores['overlap'])} |"
        )
    for split, by_language in report.seen.items():
        lines += [
            "",
            f"What an agent sees on the {split} pairs, with the best thresholds: the share "
            "of each class that comes back as a near duplicate / as a near duplicate or an "
            "overlap (pairs).",
            "",
            "| language | restated | paraphrase | same topic | unrelated |",
            "|---|---:|---:|---:|---:|",
        ]
        for language, shares in by_language.items():
            cells = [
                f"{shares[k][0]:.2f} / {shares[k][1]:.2f} ({shares[k][2]})" if k in shares else ""
                for k in CLASSES
            ]
            lines.append(f"| {language} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"
