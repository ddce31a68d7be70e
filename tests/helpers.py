"""Small helpers shared by tests: waiting on other processes, recalls in threads, issuing a
token, a lock held by another session."""

import re
import threading
import time
from contextlib import contextmanager

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


def recalled_in_threads(recall, domains: list[str], expected: dict, *, threads: int = 4) -> list:
    """``threads`` threads each recall ``domains`` 30 times in turn, each from its own place
    (``recall(domain)``): every answer not ``expected[domain]``, and whatever was raised."""
    from django.db import connection

    wrong: list = []

    def recall_many(offset: int) -> None:
        try:
            for i in range(30):
                domain = domains[(i + offset) % len(domains)]
                if recall(domain) != expected[domain]:
                    wrong.append(domain)
        except BaseException as error:  # reported by the caller's thread
            wrong.append(error)
        finally:
            connection.close()

    started = [threading.Thread(target=recall_many, args=(n,)) for n in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return wrong


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


@contextmanager
def held_elsewhere(statement: str):
    """Inside the block, another database session holds the locks ``statement`` takes (in
    a transaction of its own, changing nothing), as a slow writer would."""
    import psycopg
    from django.db import connection

    held, release = threading.Event(), threading.Event()

    def hold():
        with psycopg.connect(**connection.get_connection_params()) as other:
            other.execute(statement)
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10), "the other session never got its lock"
        yield
    finally:
        release.set()
        holder.join(10)


#: What would give away the schema or the language behind the message.
INTERNALS = re.compile(
    r"\^\[|\]\*\$|\[\^|\{'|'type'|is not of type|should not be valid|does not match|"
    r"is too (short|long)\b|non-empty|\bNone\b|\bTrue\b|\bFalse\b|NoneType|\bdict\b|\bstr\b|"
    r"\bint\b|jsonschema|Traceback|additionalProperties|minLength|maxLength|minItems"
)


def assert_plain_words(message: str) -> None:
    found = INTERNALS.search(message)
    assert found is None, f"{found.group(0)!r} in: {message}"
