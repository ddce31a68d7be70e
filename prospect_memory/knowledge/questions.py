"""How well knowledge search answers the project's labelled questions (SPEC 14).

The set (``core/datasets/knowledge_questions.jsonl``) holds 60 research notes about 15
companies and 30 questions, each with the notes that answer it: *keyword* questions share
words with their answers ("Which companies raised a Series B?"), *semantic* ones do not
("Who is recruiting quota-carrying sellers?" for notes about hiring account executives).
Two measures over the five nearest notes: recall at 5, the share of a question's answers
among them (most questions have one to four answers, so this is the one that can reach
1.0), and precision at 5, the share of the five that answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from outreach.access import Actor
from prospect_memory.knowledge.selectors import PROSPECT_NOTES, knowledge_search

SHIPPED_QUESTIONS = (
    Path(__file__).resolve().parents[1] / "core" / "datasets" / "knowledge_questions.jsonl"
)


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    kind: str
    relevant: frozenset[str]


@dataclass(frozen=True)
class LabelledNote:
    id: str
    domain: str
    title: str
    body: str


@dataclass
class Answers:
    #: Recall and precision at 5 of each question, by kind ("keyword", "semantic").
    recall: dict[str, list[float]] = field(default_factory=dict)
    precision: dict[str, list[float]] = field(default_factory=dict)

    @staticmethod
    def _mean(by_kind: dict[str, list[float]], kind: str | None) -> float:
        values = [v for k, found in by_kind.items() if kind in (None, k) for v in found]
        return sum(values) / len(values) if values else 0.0

    def recall_at_5(self, kind: str | None = None) -> float:
        return self._mean(self.recall, kind)

    def precision_at_5(self, kind: str | None = None) -> float:
        return self._mean(self.precision, kind)


def load(path: Path = SHIPPED_QUESTIONS) -> tuple[list[LabelledNote], list[Question]]:
    notes, questions = [], []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["type"] == "note":
            notes.append(LabelledNote(row["id"], row["domain"], row["title"], row["body"]))
        else:
            questions.append(
                Question(row["id"], row["question"], row["kind"], frozenset(row["relevant"]))
            )
    return notes, questions


def ask(actor: Actor, questions: list[Question], label_of: Callable[[str], str | None]) -> Answers:
    """Ask each question of ``actor``'s account; ``label_of`` names the labelled note a
    found note id stands for (the notes were saved from the set)."""
    result = Answers()
    for question in questions:
        found = knowledge_search(
            actor=actor, query=question.text, kinds=[PROSPECT_NOTES], limit=5
        ).hits
        right = sum(label_of(str(hit.note.id)) in question.relevant for hit in found)
        result.recall.setdefault(question.kind, []).append(right / len(question.relevant))
        result.precision.setdefault(question.kind, []).append(right / 5)
    return result
