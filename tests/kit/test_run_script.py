"""``scripts/run`` leaves nothing running when it stops: Ctrl-C (SIGINT to its process
group, as a terminal sends it) or SIGTERM (to the script, as a supervisor sends it), while it
serves or while it still migrates, stops the development server and the embedded PostgreSQL
it started; a PostgreSQL that was already running (for a worker, say) is left running."""

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


def _python(*args: str, data_dir: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(ROOT / ".venv/bin/python"), *args],
        env={**_environment(), "KIT_DATA_DIR": str(data_dir)},
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _environment() -> dict[str, str]:
    unset = {"DATABASE_URL", "DJANGO_SETTINGS_MODULE"}  # the suite's, not a developer's
    return {key: value for key, value in os.environ.items() if key not in unset}


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "ctrl-c-while-migrating", "already-running"])
def test_stopping_scripts_run_leaves_no_process(data_dir, how, tmp_path):
    address = f"127.0.0.1:{free_port()}"
    postgres = str(data_dir / "postgres")
    if how == "already-running":
        start = f"from pathlib import Path; from kit.db import embedded_database as e; e(Path({str(data_dir)!r}))"
        _python("-c", start, data_dir=data_dir)
        assert processes_naming(postgres)
    env = _environment() | {"KIT_DATA_DIR": str(data_dir), "KIT_ADDRESS": address}
    log = (tmp_path / "run.log").open("w")
    run = subprocess.Popen(
        [str(ROOT / "scripts/run")],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, as in a terminal
        # Ctrl-C as a terminal delivers it, even where the suite itself was started in the
        # background of a shell without job control (which ignores SIGINT for it: bash
        # cannot trap a signal ignored on entry).
        preexec_fn=_interruptible,
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            assert run.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "scripts/run did not start serving"
            migrating = processes_naming("manage.py migrate") and processes_naming(postgres)
            if how == "ctrl-c-while-migrating" and migrating:
                break
            try:
                with urllib.request.urlopen(f"http://{address}/healthz", timeout=2):
                    break
            except OSError:
                time.sleep(0.2)
        assert processes_naming(postgres)
        if how == "sigterm":
            run.send_signal(signal.SIGTERM)
        else:
            os.killpg(run.pid, signal.SIGINT)
        assert run.wait(60) in {130, 143}
        deadline = time.monotonic() + 15
        while left := processes_naming(address) + processes_naming("manage.py"):
            assert time.monotonic() < deadline, left
            time.sleep(0.2)
        if how == "already-running":
            assert processes_naming(postgres), "a database it did not start was stopped"
            _python("-m", "kit.db", "stop", data_dir=data_dir)
        else:
            while left := processes_naming(postgres):
                assert time.monotonic() < deadline, left
                time.sleep(0.2)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
