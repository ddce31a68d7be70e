"""Running a benchmark script to its end from the suite: each starts its own throwaway
embedded PostgreSQL, in a folder of its own."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def short_tmp():
    """A folder for the bench's throwaway database with a short path (a server's socket
    path must fit in 107 bytes, which a test's own temporary folder can pass), readable by
    the embedded PostgreSQL's own user when we are root."""
    path = Path(tempfile.mkdtemp(prefix="kit-bench-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_bench(
    tmp: Path, script: str, *arguments: str, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``bench/<script>`` run to its end, in its own environment: not the suite's settings
    module, database or metrics folder."""
    unset = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE", "KIT_DATA_DIR", "PROMETHEUS_MULTIPROC_DIR"}
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env["TMPDIR"] = str(tmp)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done
