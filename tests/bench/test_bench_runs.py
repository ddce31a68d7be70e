"""The benchmark scripts still run as the README gives them, at a size small enough for
the suite: each starts its own throwaway database, seeds, measures and prints its table.
A benchmark that stops running (``bench/http_bench.py`` once lost its provider argument)
fails here, not on the day its figures are needed.

The integrity and model benchmarks have their own tests in ``tests/core``, the model's
memory ``tests/bench/test_model_memory_bench.py``, the cluster ``tests/bench/test_cluster.py``,
the load ``tests/load``; the peers' harness (``scripts/bench-peers`` and its lockstep
scripts) needs the peer's own environment, outside this repository, and its table of rounds
(``bench/peers_pairs.py``) is read here from the memory bench's own lines."""

import json
import shutil

import pytest

from tests.bench.conftest import ROOT, run_bench

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("script", "arguments", "printed"),
    [
        (
            "knowledge_bench.py",
            ["--sizes", "300", "--iterations", "3", "--probe-notes", "300"],
            "| notes in table |",
        ),
        ("lifecycle_bench.py", ["--notes", "50", "--entries", "20"], "erase account"),
        ("pages_bench.py", ["--iterations", "3"], "search page"),
        (
            "memory_bench.py",
            ["--sizes", "600", "--iterations", "3", "--business-entries", "50"],
            "first recall after a change",
        ),
        ("profile_recall.py", ["--requests", "5", "--fillers", "10"], "Recorded"),
        (
            "pairs_ab.py",  # this checkout against itself
            ["--against", str(ROOT), "--rounds", "1", "--iterations", "3", "--fillers", "10"],
            "| round | floor p50 |",
        ),
        (
            "http_bench.py",
            [
                "--sizes",
                "1000",
                "--iterations",
                "3",
                "--workers",
                "1",
                "--threads",
                "2",
                "--servers",
                "sync,gthread,uvicorn",
                "--clients",
                "1,2",
                "--seconds",
                "1",
                "--runs",
                "1",
            ],
            "| stored notes |",
        ),
    ],
)
def test_the_benchmark_runs(script, arguments, printed, short_tmp):
    done = run_bench(short_tmp, script, *arguments, "--provider", "hashing")
    assert printed in done.stdout
    if script == "memory_bench.py":
        peers_pairs_read(done.stdout, short_tmp / "peers")
    if script == "http_bench.py":
        # Every server compared answered every recall under load: a rate of refusals would
        # be no figure of recalls.
        (row,) = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        loads = {(load["server"], load["clients"]): load["errors"] for load in row["loads"]}
        assert loads == {(s, c): 0 for s in ("sync", "gthread", "uvicorn") for c in (1, 2)}


def test_the_business_steps_run(short_tmp):
    """``bench/business_steps.py`` chooses its provider itself (the hashing one)."""
    done = run_bench(short_tmp, "business_steps.py", "--iterations", "3")
    assert "store" in done.stdout


@pytest.mark.skipif(not shutil.which("valgrind"), reason="counting instructions needs valgrind")
def test_the_recall_profile_counts_instructions(short_tmp):
    """``--instructions`` runs the profile again under callgrind and prints a count per
    request: the figure compared across versions on a machine whose speed varies."""
    done = run_bench(
        short_tmp,
        "profile_recall.py",
        *("--instructions", "--requests", "3", "--fillers", "10", "--provider", "hashing"),
        timeout=600,
    )
    (line,) = [line for line in done.stdout.splitlines() if "instructions per request" in line]
    assert float(line.split(": ")[1].split()[0]) > 1  # millions: a recall is not free


@pytest.mark.skipif(not shutil.which("valgrind"), reason="counting instructions needs valgrind")
def test_the_http_instruction_count_runs(short_tmp):
    """``bench/http_instructions.py``: gunicorn under callgrind, one count per MCP recall."""
    done = run_bench(
        short_tmp, "http_instructions.py", "--requests", "3", "--fillers", "10", "--mcp",
        timeout=900,
    )  # fmt: skip
    (line,) = [line for line in done.stdout.splitlines() if "instructions per request" in line]
    assert line.startswith("3 MCP recalls over HTTP")
    assert float(line.split(": ")[1].split()[0]) > 1


def peers_pairs_read(kit_output: str, folder):
    """``bench/peers_pairs.py`` (the side by side's table of every round, standard library
    only) reads Kit's business lines as ``bench/memory_bench.py`` prints them today, beside
    a peer run in the harness's form: a change to either side's lines fails here."""
    import sys

    sys.path.insert(0, str(ROOT))
    from bench.peers_pairs import table

    folder.mkdir()
    (folder / "kit_r1.log").write_text(kit_output)
    ms = {"p50": 2.0}
    scale = {"get": ms, "list": ms, "search10": ms, "search20": ms, "put": ms}
    (folder / "lgs_r1.json").write_text(json.dumps({"scales": [scale, scale]}))
    rows = table(folder)
    assert rows[2] == "| items | operation | r1 |"
    operations = [row.split(" | ")[1] for row in rows[4:]]
    scales = kit_output.count(" entries, ")  # one business line a scale the run measured
    assert scales >= 1
    assert operations.count("store, new key (peer `put` p50 ms)") == scales
    assert "search of 1,000, Kit / peer limit 10" in operations
    assert all(row.endswith("x |") or row.endswith(") |") for row in rows[4:])
