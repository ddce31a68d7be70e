"""Small helpers shared by tests that wait on other processes."""

import time


def wait_for(condition, timeout: float = 60.0, what: str = "condition", every: float = 0.1):
    """Poll ``condition`` until it is true, or fail saying what never happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")
