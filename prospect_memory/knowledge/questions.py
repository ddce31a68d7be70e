"""How well knowledge search answers the project's labelled questions (SPEC 14).

The set (``core/datasets/knowledge_questions.jsonl``) holds 100 research notes about 25
companies, in English, German, French, Spanish and Polish, and 60 questions in the same
languages, each with the notes that answer it: *keyword* questions share words with their
answers ("Which companies raised a Series B?"), *semantic* ones do not ("Who is recruiting
quota-carrying sellers?" for notes about hiring account executives). 47 questions have
answers in another language than their own ("Welche Firmen stellen gerade Vertriebler
ein?" answered by English, Spanish and Polish notes too).

Two measures over the nearest notes: recall at 5, the share of a question's answers among
the five nearest, and precision at 5, the share of the nearest ``min(5, answers)`` that
answer (a question with three answers is judged on its three nearest, so a perfect search
scores 1.0 on every question). Each is given by kind, and by reach: *within* a language
(every answer in the question's language) or *across* languages.
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
    language: str = "en"
    #: The languages of its answers.
    answers_in: frozenset[str] = frozenset({"en"})

    @property
    def reach(self) -> str:
        """``within`` when every answer is in the question's language, else ``across``."""
        return "within" if self.answers_in <= {self.language} else "across"


@dataclass(frozen=True)
class LabelledNote:
    id: str
    domain: str
    title: str
    body: str
    language: str = "en"


@dataclass
class Answers:
    #: Recall and precision at 5 of each question, by kind ("keyword", "semantic") and by
    #: reach ("within", "across").
    recall: dict[str, list[float]] = field(default_factory=dict)
    precision: dict[str, list[float]] = field(default_factory=dict)

    @staticmethod
    def _mean(by_group: dict[str, list[float]], group: str | None) -> float:
        # Every question is in one kind (and one reach): the kinds together are all of them.
        groups = [group] if group else ["keyword", "semantic"]
        values = [v for g in groups for v in by_group.get(g, [])]
        return sum(values) / len(values) if values else 0.0

    def recall_at_5(self, group: str | None = None) -> float:
        """Mean recall at 5 of a kind or a reach of question (every question when None)."""
        return self._mean(self.recall, group)

    def precision_at_5(self, group: str | None = None) -> float:
        """Mean precision at 5 of a kind or a reach of question (every question when None)."""
        return self._mean(self.precision, group)


def load(path: Path = SHIPPED_QUESTIONS) -> tuple[list[LabelledNote], list[Question]]:
    notes, questions = [], []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["type"] == "note":
            notes.append(
                LabelledNote(
                    row["id"], row["domain"], row["title"], row["body"], row.get("language", "en")
                )
            )
        else:
            questions.append(
                Question(
                    row["id"],
                    row["question"],
                    row["kind"],
                    frozenset(row["relevant"]),
                    row.get("language", "en"),
                    frozenset(row.get("answers_in", ["en"])),
                )
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
        labels = [label_of(str(hit.note.id)) for hit in found]
        judged = min(5, len(question.relevant))
        recall = sum(label in question.relevant for label in labels) / len(question.relevant)
        precision = sum(label in question.relevant for label in labels[:judged]) / judged
        for group in (question.kind, question.reach):
            result.recall.setdefault(group, []).append(recall)
            result.precision.setdefault(group, []).append(precision)
    return result
