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


def cpu_seconds(web_pid: int) -> dict[str, float]:
    """CPU time so far of the web server (``web_pid`` and its children) and of every
    PostgreSQL process."""
    tick = os.sysconf("SC_CLK_TCK")
    totals = {"web": 0.0, "db": 0.0}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        found = _stat(entry)
        if found is None:
            continue
        name, fields = found
        used = (int(fields[11]) + int(fields[12])) / tick
        if int(entry) == web_pid or int(fields[1]) == web_pid:
            totals["web"] += used
        elif name == "postgres":
            totals["db"] += used
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
