"""A REST answer's data is freed as soon as the answer is sent and nothing else holds it,
not when the garbage collector next runs (``OperationApi.finalize_response``): the view
and DRF's answer sit in reference cycles with the request, and a recall's data is a few
hundred lists and dicts a worker would otherwise carry until its next collection."""

from __future__ import annotations

import gc
import sys

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.test import RequestFactory

from tests.helpers import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_collector():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.django_db(transaction=True)  # a server's request opens and closes connections
def test_a_recalls_data_is_held_only_by_whoever_still_holds_it(member, no_collector):
    # As a WSGI server serves it (Django's test client keeps its answers in cycles of its
    # own: ``response.json``).
    environ = RequestFactory().get("/api/v1/recall?domain=acme.dev", **bearer(member)).environ
    statuses = []
    response = WSGIHandler()(environ, lambda status, headers: statuses.append(status))
    b"".join(response)
    assert statuses == ["200 OK"]
    data = response.data
    response.close()  # sent
    assert sys.getrefcount(data) > 2  # the answer holds it, and the test
    del response  # the server lets go of it
    assert sys.getrefcount(data) == 2  # the test's name and getrefcount's argument


def test_an_answer_once_sent_still_reads_as_it_was_sent(client, member):
    response = client.get("/api/v1/recall?domain=acme.dev", **bearer(member))
    assert response.renderer_context is None  # let go of when it was sent
    assert response.json() == response.data
    assert response.data["data"]["domain"] == "acme.dev"
