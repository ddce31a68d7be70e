"""``bench/model_memory.py`` (``scripts/bench-model-memory``) still runs, at its smallest:
one worker, every set-up (the local embedding service too), a few saves and embeddings,
with the real model, on a throwaway database of its own. Its figures are in
docs/operations.md ("The model once per machine"); this only keeps it from breaking."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def short_tmp():
    """A short folder for the bench's throwaway database (a socket's path must fit in 107
    bytes), readable by the embedded PostgreSQL's own user when we are root."""
    path = Path(tempfile.mkdtemp(prefix="kit-bench-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_model_memory_benchmark_runs(short_tmp):
    unset = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "KIT_DATA_DIR", "PROMETHEUS_MULTIPROC_DIR"}
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env["TMPDIR"] = str(short_tmp)
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "model_memory.py"),
            *("--workers", "1", "--runs", "1", "--saves", "3", "--calls", "3"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for setup in ("per-worker", "preload", "preload-prepack", "service"):
        assert f"| {setup} | 1 |" in done.stdout
    assert "| the weights as they lie (per-worker, preload) |" in done.stdout
