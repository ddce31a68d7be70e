"""Knowledge search with the default semantic model on the project's labelled questions
(SPEC 14): keyword and semantic questions, recall at 5 over 60 notes."""

import pytest

from prospect_memory.knowledge.questions import ask, load
from tests.factories import save_note

pytestmark = pytest.mark.django_db


@pytest.fixture
def semantic(settings):
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        "EMBEDDING_OPTIONS": {},
    }


def recall_at_5(actor) -> dict[str, float]:
    """Save the set's notes, ask its questions: the share of answers among the five nearest."""
    notes, questions = load()
    labels = {}
    for note in notes:
        saved = save_note(actor, domain=note.domain, title=note.title, body=note.body)
        labels[str(saved.note.id)] = note.id
    found = ask(actor, questions, labels.get)
    return {"keyword": found.recall_at_5("keyword"), "semantic": found.recall_at_5("semantic")}


def test_the_semantic_model_answers_questions_in_other_words(admin_actor, semantic):
    recall = recall_at_5(admin_actor)
    print(f"recall at 5 with the semantic model: {recall}")
    # Measured (docs/embeddings.md): semantic 0.71, keyword 0.91; hashing 0.36 and 0.77.
    assert recall["semantic"] >= 0.65
    assert recall["keyword"] >= 0.8


def test_the_hashing_provider_does_not(admin_actor):
    """Why the semantic model is the default: with hashed words, questions in other words
    find little."""
    recall = recall_at_5(admin_actor)
    print(f"recall at 5 with the hashing provider: {recall}")
    assert recall["semantic"] < 0.5
