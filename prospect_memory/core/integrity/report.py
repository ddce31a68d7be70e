"""How well the integrity checks do on a labelled set (SPEC 15, "Measured").

The set (``datasets/integrity_set.jsonl``, one JSON object per line) holds notes and
entries labelled ``poisoned`` (should be flagged), ``clean`` (ordinary research that talks
about AI, assistants, agents, instructions or hiding; should not be), ``invisible`` (should
be refused) and ``emoji`` (should be accepted), in the five product languages, split in
halves: the patterns were written looking at ``dev`` only, ``holdout`` was not read.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prospect_memory.core.integrity import (
    SOURCE_IDS,
    Flag,
    entry_flags,
    invisible_characters,
    note_flags,
    value_texts,
)

DEFAULT_SET = Path(__file__).parents[1] / "datasets" / "integrity_set.jsonl"


def load(path: Path | str = DEFAULT_SET) -> list[dict]:
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _source(item: dict) -> dict[str, str]:
    source = item.get("source") or {}
    return {name: source[name] for name in SOURCE_IDS if isinstance(source.get(name), str)}


def item_flags(item: dict) -> list[Flag]:
    """What a write of ``item`` would flag: the very checks notes and entries run."""
    if item["kind"] == "note":
        return note_flags(
            title=item.get("title") or "",
            body=item.get("body") or "",
            source_urls=item.get("source_urls") or [],
        )
    return entry_flags(key=item.get("key") or "", value=item["value"], source=_source(item))


def item_refused(item: dict) -> bool:
    """Whether a write of ``item`` would be refused for an invisible character."""
    if item["kind"] == "note":
        texts = [item.get("title") or "", item.get("body") or "", *item.get("source_urls", [])]
    else:
        texts = [text for _, text in value_texts(item["value"])]
        texts += list(_source(item).values())
    return any(invisible_characters(text) for text in texts)


@dataclass
class Tally:
    total: int = 0
    hits: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0


@dataclass
class Report:
    #: per language: poisoned contained (flagged, or refused for a hidden character) / poisoned
    detection: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    #: per language: clean flagged / clean (lower is better)
    false_flags: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    refused: Tally = field(default_factory=Tally)
    emoji_accepted: Tally = field(default_factory=Tally)
    #: microseconds per item of checking (refusal and scan), median of the clean notes
    cost_us: float = 0.0

    def total(self, tallies: dict[str, Tally]) -> Tally:
        total = Tally()
        for tally in tallies.values():
            total.total += tally.total
            total.hits += tally.hits
            total.misses += tally.misses
        return total


def evaluate(items: Iterable[dict], *, split: str | Iterable[str] | None = None) -> Report:
    """The report of ``items`` (only those of ``split``, one split or several, if given)."""
    splits = {split} if isinstance(split, str) else set(split or ())
    report = Report()
    costs: list[float] = []
    for item in items:
        if splits and item.get("split") not in splits:
            continue
        language, label = item["language"], item["label"]
        started = time.perf_counter()
        refused = item_refused(item)
        flagged = bool(item_flags(item))
        elapsed = time.perf_counter() - started
        if label == "poisoned":
            tally = report.detection[language]
            tally.total += 1
            tally.hits += flagged or refused
            if not (flagged or refused):
                tally.misses.append(item["id"])
        elif label == "clean":
            tally = report.false_flags[language]
            tally.total += 1
            tally.hits += flagged or refused
            if flagged or refused:
                tally.misses.append(item["id"])
            if item["kind"] == "note":
                costs.append(elapsed)
        elif label == "invisible":
            report.refused.total += 1
            report.refused.hits += refused
            if not refused:
                report.refused.misses.append(item["id"])
        elif label == "emoji":
            report.emoji_accepted.total += 1
            report.emoji_accepted.hits += not refused and not flagged
            if refused or flagged:
                report.emoji_accepted.misses.append(item["id"])
    costs.sort()
    report.cost_us = costs[len(costs) // 2] * 1e6 if costs else 0.0
    return report


def lines(report: Report) -> Iterator[str]:
    """The report as a table an operator reads."""
    yield "language  poisoned contained   clean flagged"
    for language in sorted(set(report.detection) | set(report.false_flags)):
        d, f = report.detection[language], report.false_flags[language]
        yield (
            f"{language:<9} {d.hits:>3}/{d.total:<3} {d.rate:6.1%}     "
            f"{f.hits:>3}/{f.total:<4} {f.rate:6.1%}"
        )
    d, f = report.total(report.detection), report.total(report.false_flags)
    yield (
        f"{'all':<9} {d.hits:>3}/{d.total:<3} {d.rate:6.1%}     "
        f"{f.hits:>3}/{f.total:<4} {f.rate:6.1%}"
    )
    r, e = report.refused, report.emoji_accepted
    yield f"invisible characters refused: {r.hits}/{r.total} ({r.rate:.1%}), nothing stored"
    yield f"emoji with joiners and variation selectors accepted: {e.hits}/{e.total} ({e.rate:.1%})"
    yield f"cost per clean note (median, refusal and scan): {report.cost_us:.0f} µs"
