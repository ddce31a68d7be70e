"""Each gunicorn worker sets its garbage collector's thresholds from
``KIT_WEB_GC_THRESHOLDS`` once it has loaded the application (``gunicorn.conf.py``), and a
value that is not three whole numbers of 1 or more (0 would turn collection off) stops it
with the setting named: when the settings load, before the worker serves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: A worker's start as gunicorn calls it, in a process of its own (it freezes the
#: collector's objects and sets its thresholds for good).
WORKER_START = """
import gc, logging, runpy, django
django.setup()
config = runpy.run_path("gunicorn.conf.py")
class Worker:
    log = logging.getLogger("worker")
config["post_worker_init"](Worker())
print(gc.get_threshold(), gc.get_freeze_count() > 0)
"""


def start_a_worker(thresholds: str | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "hashing"}
    env.pop("KIT_WEB_GC_THRESHOLDS", None)
    if thresholds is not None:
        env["KIT_WEB_GC_THRESHOLDS"] = thresholds
    return subprocess.run(
        [sys.executable, "-c", WORKER_START],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("given", "set_to"),
    [
        (None, "(700, 10, 10)"),
        ("", "(700, 10, 10)"),  # empty: as if not set
        ("50000,20,100", "(50000, 20, 100)"),
        (" 1, 5,5 ", "(1, 5, 5)"),
    ],
)
def test_a_worker_sets_the_thresholds_after_it_freezes_what_it_loaded(given, set_to):
    done = start_a_worker(given)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == f"{set_to} True"


@pytest.mark.parametrize(
    "given",
    [
        "50000",
        "fifty,20,100",
        "50000,20,-1",
        "0,10,10",
        "1,2,3,4",
        ",",
        "1000001,10,10",  # all but no collection of the youngest objects
        "2147483648,10,10",  # more than gc.set_threshold takes
    ],
)
def test_thresholds_that_are_not_three_whole_numbers_in_range_stop_the_worker(given):
    done = start_a_worker(given)
    assert done.returncode != 0
    assert "KIT_WEB_GC_THRESHOLDS is" in done.stderr
    assert "three whole numbers from 1 to 1,000,000" in done.stderr
