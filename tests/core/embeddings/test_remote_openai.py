"""OpenAICompatibleProvider through the real openai SDK against a local fake server."""

import math

import pytest

from prospect_memory.core.embeddings import PermanentEmbeddingError, RetryableEmbeddingError
from prospect_memory.core.embeddings.remote import OpenAICompatibleProvider
from tests.fakes.openai_api import API_KEY, MODEL, NATIVE_DIMENSIONS, FakeOpenAI


@pytest.fixture
def fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def serve_with(fake, settings):
    """Kit's embedding provider for the test: the OpenAI-compatible one, on ``fake``."""
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.OpenAICompatibleProvider",
        "EMBEDDING_OPTIONS": {
            "api_key": API_KEY,
            "base_url": f"{fake.url}/v1",
            "model": MODEL,
            "dimensions": NATIVE_DIMENSIONS,
            "timeout": 2.0,
        },
    }


def provider(fake, **kwargs):
    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("timeout", 2.0)
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("dimensions", NATIVE_DIMENSIONS)
    return OpenAICompatibleProvider(base_url=f"{fake.url}/v1", **kwargs)


def test_embeds_documents_with_the_wire_format_of_the_embeddings_api(fake):
    vectors = provider(fake).embed_documents(["Acme raised a Series B", "Acme hires"])
    assert [len(v) for v in vectors] == [NATIVE_DIMENSIONS] * 2
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, rel_tol=1e-9) for v in vectors)
    [request] = fake.requests
    assert request["model"] == MODEL
    assert request["input"] == ["Acme raised a Series B", "Acme hires"]
    assert request["encoding_format"] == "float"
    assert "dimensions" not in request


def test_shortened_vectors_are_asked_for_only_when_the_model_can(fake):
    [vector] = provider(fake, dimensions=64, send_dimensions=True).embed_documents(["text"])
    assert len(vector) == 64
    assert fake.requests[0]["dimensions"] == 64


def test_prefixes_mark_queries_and_documents(fake):
    p = provider(fake, query_prefix="search_query: ", document_prefix="search_document: ")
    p.embed_documents(["Acme hires"])
    p.embed_query("who is hiring")
    assert fake.texts == ["search_document: Acme hires", "search_query: who is hiring"]


def test_batches_and_answers_out_of_order(fake):
    fake.mode = "shuffled"
    texts = [f"text {i}" for i in range(10)]
    vectors = provider(fake, max_batch=4).embed_documents(texts)
    assert [len(r["input"]) for r in fake.requests] == [4, 4, 2]
    fake.mode = "ok"
    assert vectors == provider(fake).embed_documents(texts)


def test_the_model_name_records_the_size():
    p = OpenAICompatibleProvider(api_key="k", model="text-embedding-3-small", dimensions=512)
    assert p.model == "text-embedding-3-small/512"
    with pytest.raises(ValueError, match="dimensions"):
        OpenAICompatibleProvider(api_key="k", model="m", dimensions=0)


def test_a_model_name_too_long_to_record_whole_fails_the_system_checks(settings):
    from prospect_memory.core.checks import check_embedding_provider

    # Cut to the column's width, /384 and /3840 would record the same name and their
    # vectors be compared with each other.
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.OpenAICompatibleProvider",
        "EMBEDDING_OPTIONS": {"api_key": "k", "model": "m" * 97, "dimensions": 384},
    }
    [problem] = check_embedding_provider(None)
    assert problem.id == "prospect_memory.E004"
    assert "shorter name" in problem.msg


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("429", RetryableEmbeddingError),
        ("503", RetryableEmbeddingError),
        ("500", RetryableEmbeddingError),
        ("400", PermanentEmbeddingError),
        ("garbage", RetryableEmbeddingError),
        ("wrong_count", RetryableEmbeddingError),
        ("wrong_size", RetryableEmbeddingError),
    ],
)
def test_failures_are_told_apart(fake, mode, error):
    fake.mode = mode
    with pytest.raises(error):
        provider(fake).embed_documents(["a", "b"])


def test_a_wrong_key_or_model_is_permanent(fake):
    with pytest.raises(PermanentEmbeddingError, match="401"):
        provider(fake, api_key="wrong").embed_documents(["a"])
    with pytest.raises(PermanentEmbeddingError, match="404"):
        provider(fake, model="no-such-model").embed_documents(["a"])


def test_a_missing_key_is_permanent(fake):
    with pytest.raises(PermanentEmbeddingError, match="OPENAI_API_KEY"):
        OpenAICompatibleProvider(
            api_key="", model=MODEL, dimensions=8, base_url=fake.url
        ).embed_documents(["a"])


def test_a_timeout_is_retryable(fake):
    fake.delay = 1.5
    with pytest.raises(RetryableEmbeddingError, match="unreachable"):
        provider(fake, timeout=0.3).embed_documents(["a"])


def test_a_server_down_is_retryable(fake):
    fake.stop()
    with pytest.raises(RetryableEmbeddingError, match="unreachable"):
        provider(fake).embed_documents(["a"])


def test_notes_and_entries_are_embedded_and_searched_through_it(fake, settings, admin_actor):
    from outreach.access import Actor
    from prospect_memory.business.selectors.search import entries_search
    from prospect_memory.business.services.store import entry_store
    from tests.factories import save_note

    serve_with(fake, settings)
    save_note(admin_actor, title="Funding", body="Series B of 40M")
    admin = Actor.for_member(admin_actor.member)
    entry_store(actor=admin, key="brand_voice", value={"tone": "warm"})
    found = entries_search(actor=admin, query="brand voice tone")
    assert [r.entry.key for r in found.results] == ["brand_voice"]
    assert found.results[0].distance is not None
    assert found.not_compared == 0
    assert fake.texts[0] == "Funding\n\nSeries B of 40M"


def test_a_vector_too_small_to_square_is_stored_at_unit_length(fake, settings, admin_actor):
    """Components of 1e-170 square to 0: unscaled, the vector kept its length and pgvector,
    in float32, stored zeros whose every distance is NaN."""
    from prospect_memory.business.models import Entry
    from prospect_memory.business.selectors.search import entries_search
    from prospect_memory.business.services.store import entry_store

    serve_with(fake, settings)
    fake.mode = "tiny"
    entry_store(actor=admin_actor, key="brand_voice", value={"tone": "warm"})
    vector = Entry.objects.get(key="brand_voice").embedding
    assert math.isclose(math.fsum(float(x) * float(x) for x in vector), 1.0, rel_tol=1e-5)
    fake.mode = "ok"
    found = entries_search(actor=admin_actor, query="brand voice tone")
    assert [r.entry.key for r in found.results] == ["brand_voice"]
    assert math.isfinite(found.results[0].distance)


def test_a_provider_missing_its_options_fails_the_system_checks(settings):
    from prospect_memory.core.checks import check_embedding_provider

    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.OpenAICompatibleProvider",
        "EMBEDDING_OPTIONS": {"base_url": "http://127.0.0.1:11434/v1"},
    }
    [problem] = check_embedding_provider(None)
    assert problem.id == "prospect_memory.E004"
    assert "model" in problem.msg


@pytest.mark.parametrize("module", ["embeddings", "remote_providers"])
@pytest.mark.parametrize("name", ["GeminiProvider", "OpenAICompatibleProvider"])
def test_the_dotted_paths_the_docs_named_before_still_work(module, name):
    """Settings written when the remote providers lived in ``core.embeddings``, then in
    ``core.remote_providers``."""
    from prospect_memory.core.embeddings import provider_class, remote

    assert provider_class(f"prospect_memory.core.{module}.{name}") is getattr(remote, name)
