"""The commit-msg hook (and CI's check of every new commit): a subject of at most 72
characters, and a blank line before any body."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("message", "accepted"),
    [
        ("Fix the favicon\n", True),
        ("Fix the favicon\n\nWhy, in the body.\n", True),
        ("x" * 72 + "\n", True),
        ("x" * 73 + "\n", False),
        ("Fix the favicon\nWhy, without a blank line.\n", False),
        ("# a comment git strips\nFix the favicon\n", True),
    ],
)
def test_the_hook_checks_the_subject(tmp_path, message, accepted):
    file = tmp_path / "COMMIT_EDITMSG"
    file.write_text(message)
    done = subprocess.run(
        [str(ROOT / "scripts/check-commit-message"), str(file)], capture_output=True, check=False
    )
    assert (done.returncode == 0) is accepted, done.stderr
