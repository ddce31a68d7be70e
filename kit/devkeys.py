"""Development secrets kept under KIT_DATA_DIR, so the default set-up needs no configuration.

Production sets every secret in the environment; ``kit.checks`` flags a deployment that is
still running on a generated development secret.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path


def development_secret(data_dir: Path, name: str, make: Callable[[], str]) -> str:
    """Read ``data_dir/name``, creating it with ``make()`` (mode 0600) on first use."""
    path = data_dir / name
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    value = make()
    # O_EXCL: when two processes race on first start, one writes and both read the winner.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    print(
        f"kit: generated a development {name.replace('_', ' ')} in {path}; "
        "set it in the environment for production",
        file=sys.stderr,
    )
    return value
