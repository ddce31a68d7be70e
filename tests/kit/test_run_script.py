"""``scripts/run`` leaves nothing running when it stops: Ctrl-C (SIGINT to its process
group, as a terminal sends it) or SIGTERM (to the script, as a supervisor sends it) stops the
development server and the embedded PostgreSQL it started."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.live import ROOT, free_port

pytestmark = pytest.mark.slow


def processes_naming(text: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in command:
            found.append(f"{proc.name}: {command[:200]}")
    return found


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("run-script")
    yield path
    subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-m", "kit.db", "stop"],
        env={**os.environ, "KIT_DATA_DIR": str(path)},
        cwd=ROOT,
        check=False,
        capture_output=True,
    )


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_stopping_scripts_run_leaves_no_process(data_dir, how, tmp_path):
    address = f"127.0.0.1:{free_port()}"
    unset = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}  # the suite's, not a developer's
    env = {key: value for key, value in os.environ.items() if key not in unset}
    env |= {"KIT_DATA_DIR": str(data_dir), "KIT_ADDRESS": address}
    log = (tmp_path / "run.log").open("w")
    run = subprocess.Popen(
        [str(ROOT / "scripts/run")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as in a terminal
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            assert run.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "scripts/run did not start serving"
            try:
                with urllib.request.urlopen(f"http://{address}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.5)
        assert processes_naming(str(data_dir / "postgres"))
        if how == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)
        else:
            run.send_signal(signal.SIGTERM)
        assert run.wait(60) in {130, 143}
        deadline = time.monotonic() + 15
        while left := processes_naming(str(data_dir / "postgres")) + processes_naming(address):
            assert time.monotonic() < deadline, left
            time.sleep(0.2)
        assert "stopped the embedded PostgreSQL" in (tmp_path / "run.log").read_text()
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
