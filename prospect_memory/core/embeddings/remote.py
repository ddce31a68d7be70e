"""The providers that embed through someone else's service: Google's Gemini API and any
server that speaks OpenAI's embeddings API (OpenAI, Ollama, TEI, vLLM, LiteLLM). Their
failures are sorted for the retries of :mod:`prospect_memory.core.embedding_pipeline`: what another
try may cure (a timeout, a dropped connection, 429 and 5xx) from what it cannot."""

from __future__ import annotations

import math
from typing import Any

from prospect_memory.core.conf import core_settings
from prospect_memory.core.embeddings import (
    EmbeddingProvider,
    PermanentEmbeddingError,
    RetryableEmbeddingError,
    normalise,
)
from prospect_memory.core.embeddings.vectors import MODEL_NAME_MAX_CHARS

_RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}


class GeminiProvider(EmbeddingProvider):
    """Google ``gemini-embedding-001`` through the official ``google-genai`` SDK.

    Documents are embedded with task type RETRIEVAL_DOCUMENT and recall queries with
    RETRIEVAL_QUERY, at most 100 texts per request. Below the native 3072 dimensions the
    API returns vectors that are not unit length, so they are L2-normalised here. The SDK's
    own retries are off: Celery retries the retryable failures with backoff, so there is
    one retry layer. The recorded model name carries the dimensionality, so vectors of
    different sizes are never compared.
    """

    base_model = "gemini-embedding-001"
    max_batch = 100

    def __init__(
        self,
        *,
        api_key: str | None = None,
        dimensions: int = 768,
        base_url: str | None = None,
        timeout: float = 10.0,
        near_duplicate_distance: float | None = None,
        overlap_distance: float | None = None,
    ) -> None:
        super().__init__(
            near_duplicate_distance=near_duplicate_distance, overlap_distance=overlap_distance
        )
        if not 128 <= dimensions <= 3072:
            raise ValueError("Gemini output dimensionality must be between 128 and 3072")
        self.api_key = api_key or core_settings.GEMINI_API_KEY
        self.dimensions = dimensions
        self.model = f"{self.base_model}/{dimensions}"
        self.base_url = base_url
        self.timeout = timeout
        self._client: Any = None  # the SDK's client, made on first use

    def _get_client(self) -> Any:
        if self._client is None:
            if not self.api_key:
                raise PermanentEmbeddingError("GEMINI_API_KEY is not configured")
            # The SDK is imported only by deployments that use Gemini (it is slow to load).
            from google import genai
            from google.genai import types

            options = types.HttpOptions(
                api_version="v1beta",
                timeout=int(self.timeout * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
                base_url=self.base_url or None,
            )
            self._client = genai.Client(api_key=self.api_key, http_options=options)
        return self._client

    def _embed(self, texts: list[str], task_type: str, timeout: float | None) -> list[list[float]]:
        from google.genai import errors, types

        client = self._get_client()
        seconds = min(timeout, self.timeout) if timeout else self.timeout
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.max_batch):
            batch = texts[start : start + self.max_batch]
            config = types.EmbedContentConfig(
                task_type=task_type,
                output_dimensionality=self.dimensions,
                http_options=types.HttpOptions(
                    timeout=max(int(seconds * 1000), 1),
                    retry_options=types.HttpRetryOptions(attempts=1),
                ),
            )
            try:
                response = client.models.embed_content(
                    model=self.base_model, contents=batch, config=config
                )
            except errors.APIError as exc:
                error = (
                    RetryableEmbeddingError
                    if exc.code in _RETRYABLE_STATUS
                    else PermanentEmbeddingError
                )
                raise error(f"Gemini answered {exc.code} {exc.status or ''}".strip()) from exc
            except Exception as exc:
                if _is_transport_error(exc):
                    raise RetryableEmbeddingError(
                        f"Gemini unreachable: {type(exc).__name__}"
                    ) from exc
                if isinstance(exc, ValueError | TypeError | KeyError):
                    raise RetryableEmbeddingError(
                        f"Gemini sent an answer that could not be read: {type(exc).__name__}"
                    ) from exc
                raise
            vectors.extend(self._vectors_of(response, len(batch)))
        return vectors

    def _vectors_of(self, response: Any, expected: int) -> list[list[float]]:
        embeddings = getattr(response, "embeddings", None) or []
        if len(embeddings) != expected:
            raise RetryableEmbeddingError(
                f"Gemini returned {len(embeddings)} embeddings for {expected} texts"
            )
        vectors = []
        for embedding in embeddings:
            values = getattr(embedding, "values", None)
            if (
                not isinstance(values, list)
                or len(values) != self.dimensions
                or not all(isinstance(v, int | float) and math.isfinite(v) for v in values)
            ):
                raise RetryableEmbeddingError(
                    f"Gemini returned a malformed vector (expected {self.dimensions} numbers)"
                )
            vectors.append(normalise([float(v) for v in values]))
        return vectors

    def embed_documents(
        self, texts: list[str], *, timeout: float | None = None
    ) -> list[list[float]]:
        return self._embed(texts, "RETRIEVAL_DOCUMENT", timeout)

    def embed_query(self, text: str, *, timeout: float | None = None) -> list[float]:
        return self._embed([text], "RETRIEVAL_QUERY", timeout)[0]


class OpenAICompatibleProvider(EmbeddingProvider):
    """Any server that speaks OpenAI's embeddings API, through the official ``openai`` SDK:
    OpenAI itself, or a self-hosted Ollama, Hugging Face TEI, vLLM or LiteLLM.

    Options: ``model`` (as the server names it), ``dimensions`` (the size of the vectors it
    returns), ``base_url`` (None: OpenAI), ``api_key`` (default: the ``OPENAI_API_KEY``
    setting; servers that ask for none take any text), ``send_dimensions`` (ask the server
    to shorten its vectors to ``dimensions``, for models that can, such as OpenAI's
    text-embedding-3; others refuse the parameter), ``query_prefix`` and
    ``document_prefix`` (for models trained with them, such as nomic-embed-text's
    ``search_query: ``), ``max_batch``, ``timeout``, and the two distance thresholds, which
    depend on the model. Vectors are L2-normalised here; the SDK's own retries are off
    (Celery retries), and vectors are asked for as JSON floats, which every server speaks.
    """

    def __init__(
        self,
        *,
        model: str,
        dimensions: int,
        base_url: str | None = None,
        api_key: str | None = None,
        send_dimensions: bool = False,
        query_prefix: str = "",
        document_prefix: str = "",
        max_batch: int = 64,
        timeout: float = 10.0,
        near_duplicate_distance: float | None = None,
        overlap_distance: float | None = None,
    ) -> None:
        super().__init__(
            near_duplicate_distance=near_duplicate_distance, overlap_distance=overlap_distance
        )
        if not model or not 1 <= dimensions <= 16_000:
            raise ValueError("an OpenAI-compatible provider needs a model and 1-16,000 dimensions")
        self.base_model = model
        self.dimensions = dimensions
        # Recorded with every vector: vectors of another model or size are never compared,
        # so the name is never cut (two sizes would share it).
        self.model = f"{model}/{dimensions}"
        if len(self.model) > MODEL_NAME_MAX_CHARS:
            raise ValueError(
                f"the model name with its dimensions ({self.model!r}) is longer than "
                f"{MODEL_NAME_MAX_CHARS} characters; use a shorter name for the model"
            )
        self.base_url = base_url
        self.api_key = api_key or core_settings.OPENAI_API_KEY
        self.send_dimensions = send_dimensions
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.max_batch = max_batch
        self.timeout = timeout
        self._client: Any = None  # the SDK's client, made on first use

    def _get_client(self) -> Any:
        if self._client is None:
            if not self.api_key:
                raise PermanentEmbeddingError(
                    "OPENAI_API_KEY is not configured (a server that needs no key takes any "
                    "text as api_key)"
                )
            from openai import OpenAI

            self._client = OpenAI(
                api_key=self.api_key,
                base_url=self.base_url,
                timeout=self.timeout,
                max_retries=0,
            )
        return self._client

    def _embed(self, texts: list[str], timeout: float | None) -> list[list[float]]:
        import openai

        client = self._get_client()
        seconds = min(timeout, self.timeout) if timeout else self.timeout
        extra = {"dimensions": self.dimensions} if self.send_dimensions else {}
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.max_batch):
            batch = texts[start : start + self.max_batch]
            try:
                response = client.embeddings.create(
                    model=self.base_model,
                    input=batch,
                    encoding_format="float",
                    timeout=seconds,
                    **extra,
                )
            except openai.APIStatusError as exc:
                error = (
                    RetryableEmbeddingError
                    if exc.status_code in _RETRYABLE_STATUS
                    else PermanentEmbeddingError
                )
                raise error(f"the embedding server answered {exc.status_code}") from exc
            except openai.APIConnectionError as exc:  # timeouts included
                raise RetryableEmbeddingError(
                    f"the embedding server is unreachable: {type(exc).__name__}"
                ) from exc
            except (ValueError, TypeError, KeyError) as exc:
                raise RetryableEmbeddingError(
                    f"the embedding server sent an answer that could not be read: "
                    f"{type(exc).__name__}"
                ) from exc
            vectors.extend(self._vectors_of(response, len(batch)))
        return vectors

    def _vectors_of(self, response: Any, expected: int) -> list[list[float]]:
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            count = len(data) if isinstance(data, list) else 0
            raise RetryableEmbeddingError(
                f"the embedding server returned {count} embeddings for {expected} texts"
            )
        vectors: list[list[float] | None] = [None] * expected
        for position, item in enumerate(data):
            index = getattr(item, "index", position)
            values = getattr(item, "embedding", None)
            if (
                not isinstance(index, int)
                or not 0 <= index < expected
                or vectors[index] is not None
                or not isinstance(values, list)
                or len(values) != self.dimensions
                or not all(isinstance(v, int | float) and math.isfinite(v) for v in values)
            ):
                raise RetryableEmbeddingError(
                    f"the embedding server returned a malformed vector (expected "
                    f"{self.dimensions} numbers; check the provider's dimensions option)"
                )
            vectors[index] = normalise([float(v) for v in values])
        # Every slot is filled: ``expected`` items, each at its own index below ``expected``.
        return [vector for vector in vectors if vector is not None]

    def embed_documents(
        self, texts: list[str], *, timeout: float | None = None
    ) -> list[list[float]]:
        return self._embed([self.document_prefix + text for text in texts], timeout)

    def embed_query(self, text: str, *, timeout: float | None = None) -> list[float]:
        return self._embed([self.query_prefix + text], timeout)[0]


def _is_transport_error(exc: Exception) -> bool:
    """Timeouts and connection failures of whichever HTTP client the SDK runs on."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names & {"TimeoutException", "ConnectError", "NetworkError", "RemoteProtocolError"}
        or isinstance(exc, TimeoutError | ConnectionError)
    )
