"""The notes' HNSW index: built by the migration for the configured model, used for large
accounts, rebuilt for another model by ``manage.py knowledge_index``; search through it
finds what exact search finds."""

import pytest
from django.core.management import call_command
from django.db import connection

from prospect_memory.core.embeddings import get_provider
from prospect_memory.knowledge.selectors import knowledge_search
from prospect_memory.notes.index import index_name, index_ready
from tests.factories import save_note
from tests.fakes.openai_api import API_KEY, MODEL, NATIVE_DIMENSIONS

FACTS = [
    "is hiring account executives in Berlin",
    "raised a Series B led by Example Ventures",
    "moved its headquarters to Lyon",
    "launched a self-serve plan priced per seat",
    "named a new VP of Sales from a competitor",
    "runs its product on Django and PostgreSQL",
]


def indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'note\\_knn\\_%'")
        return {name for (name,) in cursor.fetchall()}


@pytest.mark.django_db
def test_the_migration_built_the_index_of_the_configured_model():
    assert index_name(get_provider().model) in indexes()
    assert index_ready(get_provider().model)


@pytest.mark.django_db
def test_search_through_the_index_finds_what_exact_search_finds(admin_actor, settings):
    for i in range(60):
        company = f"company{i}.com"
        save_note(admin_actor, domain=company, title="Signal", body=f"{company} {FACTS[i % 6]}.")
    questions = ["who is hiring account executives", "series B funding", "Django shops"]
    exact = [knowledge_search(actor=admin_actor, query=q, limit=5) for q in questions]
    settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, "KNOWLEDGE_EXACT_MAX_NOTES": 0}
    indexed = [knowledge_search(actor=admin_actor, query=q, limit=5) for q in questions]
    for a, b in zip(exact, indexed, strict=True):
        # Equally near neighbours may come in another order: compare how near they are.
        assert [round(h.distance, 6) for h in a.hits] == [round(h.distance, 6) for h in b.hits]


@pytest.mark.django_db(transaction=True)
def test_the_command_builds_another_models_index_and_drops_the_old(settings, capsys):
    local = index_name(get_provider().model)
    before = settings.PROSPECT_MEMORY
    settings.PROSPECT_MEMORY = {
        **before,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.OpenAICompatibleProvider",
        "EMBEDDING_OPTIONS": {"api_key": API_KEY, "model": MODEL, "dimensions": NATIVE_DIMENSIONS},
    }
    try:
        call_command("knowledge_index", "--drop-others")
        other = index_name(get_provider().model)
        assert indexes() == {other}
        assert f"dropped {local}" in capsys.readouterr().out
    finally:
        settings.PROSPECT_MEMORY = before
        call_command("knowledge_index", "--drop-others")
    assert indexes() == {local}
