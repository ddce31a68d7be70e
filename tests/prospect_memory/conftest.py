import pytest

from outreach.access import Actor
from tests.fakes.gemini import API_KEY, FakeGemini


@pytest.fixture
def actor(module_admin):
    return Actor.for_member(module_admin)


@pytest.fixture
def other_actor(other_admin):
    return Actor.for_member(other_admin)


@pytest.fixture
def gemini(settings):
    """The Gemini provider, through the real SDK, against a local fake of the API."""
    fake = FakeGemini().start()
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.GeminiProvider",
        "EMBEDDING_OPTIONS": {"api_key": API_KEY, "base_url": fake.url, "timeout": 2.0},
        "EMBED_TIME_BUDGET_SECONDS": 1.0,
    }
    yield fake
    fake.stop()
