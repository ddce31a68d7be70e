"""GeminiProvider through the real google-genai SDK against a local fake of the API."""

import math

import pytest

from prospect_memory.core.embeddings import PermanentEmbeddingError, RetryableEmbeddingError
from prospect_memory.core.embeddings.remote import GeminiProvider
from tests.fakes.gemini import API_KEY, FakeGemini
from tests.helpers import wait_for


@pytest.fixture
def fake():
    server = FakeGemini().start()
    yield server
    server.stop()


def provider(fake, **kwargs):
    kwargs.setdefault("api_key", API_KEY)
    kwargs.setdefault("timeout", 2.0)
    return GeminiProvider(base_url=fake.url, **kwargs)


def test_embeds_documents_with_the_wire_format_google_uses(fake):
    vectors = provider(fake).embed_documents(["Acme raised a Series B", "Acme hires"])
    assert len(vectors) == 2
    assert all(len(v) == 768 for v in vectors)
    [batch] = fake.requests
    assert batch["path"] == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    first = batch["requests"][0]
    assert first["taskType"] == "RETRIEVAL_DOCUMENT"
    assert first["outputDimensionality"] == 768
    assert first["model"] == "models/gemini-embedding-001"
    assert first["content"]["parts"][0]["text"] == "Acme raised a Series B"


def test_vectors_below_3072_dimensions_are_renormalised(fake):
    [vector] = provider(fake, dimensions=1536).embed_documents(["text"])
    assert len(vector) == 1536
    assert math.isclose(math.fsum(v * v for v in vector), 1.0, rel_tol=1e-9)


def test_query_uses_the_query_task_type(fake):
    provider(fake).embed_query("what does Acme charge")
    assert fake.requests[0]["requests"][0]["taskType"] == "RETRIEVAL_QUERY"


def test_batches_hold_at_most_100_texts(fake):
    vectors = provider(fake).embed_documents([f"text {i}" for i in range(250)])
    assert len(vectors) == 250
    assert [len(b["requests"]) for b in fake.requests] == [100, 100, 50]


def test_model_name_records_the_dimensionality():
    assert GeminiProvider(api_key="k", dimensions=768).model == "gemini-embedding-001/768"
    with pytest.raises(ValueError, match="between 128 and 3072"):
        GeminiProvider(api_key="k", dimensions=64)


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("429", RetryableEmbeddingError),
        ("503", RetryableEmbeddingError),
        ("500", RetryableEmbeddingError),
        ("400", PermanentEmbeddingError),
        ("garbage", RetryableEmbeddingError),
        ("bad_json_shape", RetryableEmbeddingError),
        ("wrong_count", RetryableEmbeddingError),
    ],
)
def test_failures_are_told_apart(fake, mode, error):
    fake.mode = mode
    with pytest.raises(error):
        provider(fake).embed_documents(["a", "b"])


def test_wrong_key_is_permanent(fake):
    with pytest.raises(PermanentEmbeddingError, match="401"):
        provider(fake, api_key="wrong").embed_documents(["a"])


def test_missing_key_is_permanent(fake, settings):
    with pytest.raises(PermanentEmbeddingError, match="GEMINI_API_KEY"):
        GeminiProvider(api_key="", base_url=fake.url).embed_documents(["a"])


def test_timeout_is_retryable(fake):
    fake.delay = 1.5
    with pytest.raises(RetryableEmbeddingError, match="unreachable"):
        provider(fake, timeout=0.3).embed_documents(["a"])


def test_service_down_is_retryable(fake):
    fake.stop()
    with pytest.raises(RetryableEmbeddingError, match="unreachable"):
        provider(fake).embed_documents(["a"])


def test_the_provider_sees_only_title_and_body(fake, settings, admin_actor, gemini):
    from tests.factories import save_note

    save_note(admin_actor, title="Funding", body="Series B of 40M")
    # A cold SDK can take longer than the save's time budget: its request still arrives.
    wait_for(lambda: gemini.texts, 10, "the provider's request")
    assert gemini.texts == ["Funding\n\nSeries B of 40M"]
    sent = str(gemini.requests)
    for secret in (
        "admin@example.com",
        "acme-sales",
        "acme.dev",
        str(admin_actor.account.pk) + '"',
    ):
        assert secret not in sent
