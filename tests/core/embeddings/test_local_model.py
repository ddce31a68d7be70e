"""The local semantic provider (SPEC 14) with the English model it ships beside the default
(all-MiniLM-L6-v2, ``{"model": "all-minilm-l6-v2"}``): the pinned model and tokenizer, run
in ONNX; thresholds, calibration and checks, which every model shares. The multilingual
default has its own tests (``test_packed_model.py``).

These tests load the real model (about a quarter of a second, once per process); the rest
of the suite embeds with the hashing provider."""

import json
import shutil
from io import StringIO

import numpy
import pytest
from django.core.management import CommandError, call_command

from prospect_memory.core.embeddings import (
    ProviderUnavailable,
    SemanticProvider,
    get_provider,
    local_model,
    thresholds,
)

ROUND = "Acme Robotics raised a $40M Series B led by Northgate Ventures in March 2024."
ENGLISH = "all-minilm-l6-v2"
ENGLISH_DIR = local_model.BUNDLED_MODELS[ENGLISH]


@pytest.fixture(scope="module")
def provider():
    return SemanticProvider(model=ENGLISH)


def cosine_distance(a, b) -> float:
    return 1.0 - float(numpy.dot(a, b))


def test_the_english_model_is_the_pinned_one(provider):
    assert provider.model == "all-MiniLM-L6-v2-int8"
    assert provider.dimensions == 384
    provider.verify()
    manifest = provider.manifest
    assert manifest.model.sha256.startswith("8199be6f")
    assert manifest.tokenizer.sha256.startswith("be50c362")


def test_vectors_are_the_models_mean_pooled_and_normalised(provider):
    """The vector of a known sentence as this model gives it (its first components, pinned
    so that a change of model, tokenizer or pooling shows), and the pooling computed by hand
    from the model's raw output."""
    vector = provider.embed_documents([ROUND])[0]
    assert len(vector) == 384
    assert numpy.isclose(numpy.linalg.norm(vector), 1.0)
    assert numpy.allclose(vector[:4], [-0.0790, -0.0931, -0.0233, -0.0122], atol=1e-3), vector[:4]
    runner = local_model.runner(provider.manifest, provider.threads)
    encoding = runner.tokenizer.encode(ROUND)
    ids = numpy.array([encoding.ids], dtype=numpy.int64)
    mask = numpy.array([encoding.attention_mask], dtype=numpy.int64)
    hidden = runner.session.run(
        None,
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": numpy.zeros_like(ids)},
    )[0][0]
    by_hand = hidden.mean(axis=0)
    by_hand /= numpy.linalg.norm(by_hand)
    assert numpy.allclose(vector, by_hand, atol=1e-5)


def test_it_recognises_the_same_fact_in_other_words(provider):
    saved, paraphrase, unrelated = provider.embed_documents(
        [
            "Acme switched its CRM from HubSpot to Salesforce in 2024.",
            "In 2024 Acme migrated off HubSpot onto Salesforce as its CRM.",
            "Acme opened an office in Lisbon.",
        ]
    )
    assert cosine_distance(saved, paraphrase) < cosine_distance(saved, unrelated)
    assert cosine_distance(saved, paraphrase) <= provider.near_duplicate_distance
    assert cosine_distance(saved, unrelated) > provider.overlap_distance


def test_a_batch_gives_the_vectors_one_by_one_gives(provider):
    texts = [ROUND, "Short.", "A much longer note about pricing, " * 12, "Zatrudniają 12 osób."]
    together = provider.embed_documents(texts)
    alone = [provider.embed_documents([text])[0] for text in texts]
    assert numpy.allclose(together, alone, atol=1e-5)


def test_text_past_the_token_limit_is_cut_there(provider):
    """256 word pieces: what follows does not change the vector; what comes before does."""
    long = " ".join(f"fact{i} about the company" for i in range(200))
    assert len(provider._runner().tokenizer.encode(long).ids) == 256
    cut, longer = provider.embed_documents([long, long + " and a final remark about pricing"])
    assert numpy.allclose(cut, longer, atol=1e-6)
    short = "Acme is hiring."
    first, second = provider.embed_documents([short, short + " In Lisbon."])
    assert not numpy.allclose(first, second, atol=1e-3)


def test_text_without_words_has_no_vector_to_compare(provider):
    assert not any(provider.embed_documents(["🚀🚀"])[0])
    assert not any(provider.embed_query("???"))


def test_the_thread_setting_reaches_onnxruntime(provider):
    two = SemanticProvider(model=ENGLISH, threads=2)
    options = two._runner().session.get_session_options()
    assert options.intra_op_num_threads == 2
    assert numpy.allclose(two.embed_documents([ROUND]), provider.embed_documents([ROUND]))
    with pytest.raises(ValueError, match="threads"):
        SemanticProvider(model=ENGLISH, threads=0)


def test_another_file_is_refused_with_which_and_why(tmp_path):
    shipped = ENGLISH_DIR
    model_dir = tmp_path / "tampered"
    shutil.copytree(shipped, model_dir)
    tokenizer = model_dir / "tokenizer.json"
    tokenizer.write_text(tokenizer.read_text().replace('"[UNK]"', '"[UNKNOWN]"', 1))
    tampered = SemanticProvider(model_dir=str(model_dir))
    with pytest.raises(ProviderUnavailable, match=r"tokenizer file .* is not the pinned one"):
        tampered.verify()
    with pytest.raises(ProviderUnavailable, match="not the pinned one"):
        tampered.embed_documents(["anything"])


def test_the_system_check_explains_a_mismatch(tmp_path, settings):
    model_dir = tmp_path / "other"
    shutil.copytree(ENGLISH_DIR, model_dir)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    manifest["model"]["sha256"] = "0" * 64
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {"model_dir": str(model_dir)},
    }
    from prospect_memory.core.checks import check_embedding_provider

    (error,) = check_embedding_provider(None)
    assert error.id == "prospect_memory.E006"
    assert "model file" in error.msg
    assert "expected " + "0" * 64 in error.msg


def test_a_model_directory_without_a_manifest_fails_the_check(tmp_path, settings):
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {"model_dir": str(tmp_path)},
    }
    from prospect_memory.core.checks import check_embedding_provider

    (error,) = check_embedding_provider(None)
    assert error.id == "prospect_memory.E004"
    assert "manifest.json" in error.msg


def test_the_shipped_thresholds_are_the_calibrated_ones(provider):
    calibrated = provider.thresholds
    # Fitted before SPEC 17, when an overlap was the same fact only: kept, so that an
    # install that chooses the English model compares as it did (docs/embeddings.md).
    assert calibrated.source.startswith("calibrate_embeddings on 360 pairs")
    assert (calibrated.near_duplicate, calibrated.overlap) == (0.248, 0.45)
    assert calibrated.merge == calibrated.near_duplicate
    gemini = thresholds.thresholds_for("gemini-embedding-001/768")
    assert (gemini.near_duplicate, gemini.overlap) == (0.10, 0.30)


EXAMPLES = {
    "restated": (
        "{c} raised a $40M Series B led by Northgate in March 2024.",
        "In March 2024 {c} closed a $40M Series B; lead investor Northgate.",
    ),
    "paraphrase": (
        "{c} is hiring six account executives in Germany.",
        "{c} is recruiting quota-carrying sellers for the DACH region.",
    ),
    "same_topic": (
        "{c} is hiring six account executives in Germany.",
        "{c} hired a new VP Sales, Owen Clarke, last year.",
    ),
    "unrelated": (
        "{c} raised a $40M Series B led by Northgate in March 2024.",
        "{c}'s office in Lisbon runs on solar power.",
    ),
}
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay"]


def write_pairs(path, kinds=tuple(EXAMPLES)) -> None:
    rows = [
        {
            "id": f"{kind}-{company}",
            "language": "en",
            "class": kind,
            "a": {"title": "", "body": EXAMPLES[kind][0].format(c=company)},
            "b": {"title": "", "body": EXAMPLES[kind][1].format(c=company)},
        }
        for kind in kinds
        for company in COMPANIES
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")


@pytest.fixture
def semantic_with_a_file(tmp_path, settings):
    written = tmp_path / "thresholds.json"
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {"model": ENGLISH},
        "EMBEDDING_THRESHOLDS_FILE": str(written),
    }
    return written


def test_calibration_on_a_small_set_reports_and_writes(tmp_path, semantic_with_a_file):
    pairs = tmp_path / "pairs.jsonl"
    write_pairs(pairs)
    out = StringIO()
    call_command("calibrate_embeddings", "--pairs", str(pairs), "--write", stdout=out)
    report = out.getvalue()
    assert "| restated |" in report
    assert "near duplicate (best)" in report
    stored = json.loads(semantic_with_a_file.read_text())["models"]["all-MiniLM-L6-v2-int8"]
    assert stored["near_duplicate"] <= stored["overlap"]
    assert semantic_with_a_file.stat().st_mode & 0o044 == 0o044  # the servers can read it
    # The operator's file now decides this model's thresholds.
    assert get_provider().thresholds.near_duplicate == stored["near_duplicate"]


def test_a_file_another_process_writes_is_seen_within_the_look_again_time(
    semantic_with_a_file, monkeypatch
):
    def write_file(near, overlap):
        entry = {"near_duplicate": near, "overlap": overlap}
        semantic_with_a_file.write_text(json.dumps({"models": {"all-MiniLM-L6-v2-int8": entry}}))

    write_file(0.2, 0.4)
    thresholds.forget()
    assert get_provider().thresholds.near_duplicate == 0.2
    monkeypatch.setattr(thresholds, "LOOK_AGAIN_SECONDS", 3600.0)
    write_file(0.21, 0.41)  # as another process's calibrate_embeddings --write does
    assert get_provider().thresholds.near_duplicate == 0.2  # not looked at again yet
    monkeypatch.setattr(thresholds, "LOOK_AGAIN_SECONDS", 0.0)
    assert get_provider().thresholds.near_duplicate == 0.21


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("[1, 2]", "each line must be a JSON object"),
        ('{"id": "x", "language": "en", "class": "restated", "a": {}, "b": {}}', "a must be"),
        ('{"id": "x", "language": "en", "class": "twins", "a": {}, "b": {}}', "class must be"),
        (
            '{"id": "x", "language": "en", "class": "restated", "split": "test", "a": {}}',
            "split must be one of dev, holdout",
        ),
        ("{oops", "not JSON"),
    ],
)
def test_a_bad_pairs_file_is_refused_by_line(tmp_path, semantic_with_a_file, line, says):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(line + "\n")
    with pytest.raises(CommandError, match=f"pairs.jsonl:1: .*{says}"):
        call_command("calibrate_embeddings", "--pairs", str(pairs), "--write")
    assert not semantic_with_a_file.exists()


def test_pairs_that_cannot_decide_a_threshold_write_nothing(tmp_path, semantic_with_a_file):
    pairs = tmp_path / "pairs.jsonl"
    write_pairs(pairs, kinds=("unrelated", "same_topic"))
    with pytest.raises(
        CommandError, match="needs at least 20 pairs, some of them paraphrase/restated"
    ):
        call_command("calibrate_embeddings", "--pairs", str(pairs), "--write")
    write_pairs(pairs)
    with pytest.raises(CommandError, match="hold 0"):
        call_command("calibrate_embeddings", "--pairs", str(pairs), "--fit", "xx", "--write")
    assert not semantic_with_a_file.exists()


def test_a_broken_thresholds_file_is_reported_and_left_out(semantic_with_a_file):
    from prospect_memory.core.checks import check_thresholds_files

    semantic_with_a_file.write_text('{"models": {"all-MiniLM-L6-v2-int8": {"overlap": 0.4}}}')
    (error,) = check_thresholds_files(None)
    assert error.id == "prospect_memory.E007"
    assert "near_duplicate must be a cosine distance" in error.msg
    calibrated = get_provider().thresholds  # the shipped ones, saying what was left out
    assert (calibrated.near_duplicate, calibrated.overlap) == (0.248, 0.45)
    assert "left out: unreadable" in calibrated.source


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"near_duplicate_distance": float("nan")}, "above 0 and below 2"),
        ({"overlap_distance": -1}, "above 0 and below 2"),
        ({"overlap_distance": 0.2}, "below the near-duplicate distance"),
    ],
)
def test_thresholds_in_the_options_are_checked(settings, options, says):
    from prospect_memory.core.checks import check_embedding_provider

    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "semantic",
        # The model at its own pace: a busy machine is not what these test.
        "EMBED_TIME_BUDGET_SECONDS": 60.0,
        "EMBEDDING_OPTIONS": {"model": ENGLISH, **options},
    }
    (error,) = check_embedding_provider(None)
    assert error.id == "prospect_memory.E004"
    assert says in error.msg


def test_a_model_directory_may_name_its_thresholds_below_every_file(tmp_path):
    model_dir = tmp_path / "renamed"
    shutil.copytree(ENGLISH_DIR, model_dir)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    manifest["name"] = "all-MiniLM-L6-v2-int8-renamed"
    manifest["thresholds"] = {"near_duplicate": 0.2, "overlap": 0.4}
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    renamed = SemanticProvider(model_dir=str(model_dir))
    assert (renamed.near_duplicate_distance, renamed.overlap_distance) == (0.2, 0.4)
    assert renamed.thresholds.source == "named in the model's manifest"
    assert len(renamed.embed_documents([ROUND])[0]) == 384
    manifest["thresholds"] = {"near_duplicate": "close"}
    (model_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="thresholds must be"):
        SemanticProvider(model_dir=str(model_dir))
