"""``scripts/cluster`` brings Kit up as several machines would run it (a primary and a
streaming replica, two web nodes behind one address, two Celery workers on Redis), a fault
run goes through, and ``down --wipe`` leaves nothing running. A cluster of its own (folder,
ports, broker database), beside any a developer runs."""

import json
import os
import shutil
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

from tests.live import free_port

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _redis_answers() -> bool:
    import redis

    try:
        return bool(redis.Redis(socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@pytest.mark.skipif(not _redis_answers(), reason="no Redis on 127.0.0.1:6379 (CI starts one)")
def test_a_cluster_comes_up_serves_survives_a_fault_and_goes_down():
    home = Path(tempfile.mkdtemp(prefix="kit-cl-", dir="/tmp"))
    home.chmod(0o755)
    port = free_port()
    env = {
        **os.environ,
        "KIT_CLUSTER_DIR": str(home / "c"),
        "KIT_CLUSTER_PORT": str(port),
        "KIT_CLUSTER_BROKER": "redis://127.0.0.1:6379/13",
    }
    for name in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "KIT_DATA_DIR"):
        env.pop(name, None)  # the cluster's own, not the suite's

    def cluster(*arguments, timeout=600):
        return subprocess.run(
            ["scripts/cluster", *arguments],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    try:
        started = cluster("up")
        assert started.returncode == 0, started.stdout[-3000:] + started.stderr[-3000:]
        assert f"Kit answers on http://127.0.0.1:{port}" in started.stdout
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=30) as answer:
            assert json.loads(answer.read())["ready"] is True
        assert cluster("status").returncode == 0
        faults = cluster("faults", "--only", "replica stopped", "--seconds", "6")
        assert faults.returncode == 0, faults.stdout[-3000:] + faults.stderr[-3000:]
        row = json.loads(faults.stdout.splitlines()[0])
        assert row["saves lost"] == 0
        assert row["not 2xx"] == 0
        assert row["saves acknowledged"] > 0
        assert row["other problems"] == 0
    finally:
        stopped = cluster("down", "--wipe")
        shutil.rmtree(home, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr[-3000:]
    assert not (home / "c").exists()
