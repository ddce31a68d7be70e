"""What a benchmark reads of the processes it runs, from ``/proc``: a process's children,
its CPU time, its memory. Read from the kernel, so the figures do not depend on how busy
the machine's neighbours are, as timings do."""

from __future__ import annotations

import os
import re
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes ``pid`` forked (gunicorn's workers)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(found) for found in text.split()]


def _stat(pid: int | str) -> tuple[str, list[str]] | None:
    """A process's name and the fields of ``/proc/<pid>/stat`` after it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()


def cpu_ticks(pid: int) -> int:
    """User and system CPU time of ``pid`` so far, in clock ticks (0 once it is gone)."""
    found = _stat(pid)
    if found is None:
        return 0
    fields = found[1]
    return int(fields[11]) + int(fields[12])


def postmaster() -> int:
    """The process id of the PostgreSQL server Django's connection reaches (the parent of
    its backend), for :func:`cpu_seconds`."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    found = _stat(backend)
    assert found is not None, "the backend runs on another machine"
    return int(found[1][1])


def cpu_seconds(web_pid: int, db_pid: int) -> dict[str, float]:
    """CPU time so far of the web server (``web_pid`` and its children) and of the
    PostgreSQL server ``db_pid`` (its postmaster, with its backends and helpers): only
    theirs, so that another server on the machine, or one stopping, counts for nothing.
    A child that exited (a backend whose connection reached ``CONN_MAX_AGE``, a worker
    replaced) still counts: its parent reaped it, and the kernel adds a reaped child's time
    to the parent's own count of its children's."""
    tick = os.sysconf("SC_CLK_TCK")
    totals = {"web": 0.0, "db": 0.0}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        found = _stat(entry)
        if found is None:
            continue
        fields, pid = found[1], int(entry)
        used = int(fields[11]) + int(fields[12])
        if pid in (web_pid, db_pid):
            used += int(fields[13]) + int(fields[14])  # its reaped children's
        parent = int(fields[1])
        if web_pid in (pid, parent):
            totals["web"] += used / tick
        elif db_pid in (pid, parent):
            totals["db"] += used / tick
    return totals


def memory(pid: int) -> dict[str, float]:
    """PSS and USS (unique: private pages) of ``pid``, in MiB."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        matched = re.match(r"(\w+):\s+(\d+) kB", line)
        if matched:
            found[matched.group(1)] = int(matched.group(2))
    return {
        "pss": found["Pss"] / 1024,
        "uss": (found["Private_Clean"] + found["Private_Dirty"]) / 1024,
    }
