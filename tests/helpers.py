"""Small helpers shared by tests: waiting on other processes, issuing a token."""

import time

from outreach.services import access_token_issue

READ_WRITE = ("outreach_read", "outreach_write")


def wait_for(condition, timeout: float = 60.0, what: str = "condition", every: float = 0.1):
    """Poll ``condition`` until it is true, or fail saying what never happened."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


def bearer(member, scopes=READ_WRITE, *, client_name="Claude Code") -> dict:
    """The headers of a test client's request with a bearer token for ``member``."""
    return {"HTTP_AUTHORIZATION": f"Bearer {token(member, scopes, client_name=client_name)}"}


def token(member, scopes=READ_WRITE, *, client_name="Agent", base_url="http://testserver"):
    """A bearer token for ``member``, as ``manage.py issue_token`` issues it (one day)."""
    assert not isinstance(scopes, str), "scopes is a list; name the client with client_name="
    return access_token_issue(
        member=member,
        scopes=list(scopes),
        client_name=client_name,
        expires_days=1,
        base_url=base_url,
    )
