"""The API's content negotiation (``outreach.renderers.JSONFirstNegotiation``): the same
renderer, media type and refusals as DRF's own for every Accept header and format asked."""

from __future__ import annotations

import pytest
from django.http import Http404
from django.test import RequestFactory
from rest_framework.exceptions import APIException, NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.settings import api_settings

from outreach.renderers import FastJSONRenderer, JSONFirstNegotiation
from tests.helpers import bearer

ACCEPTS = [
    None,
    "*/*",
    "application/json",
    "application/json; q=0.9, */*; q=0.1",
    "application/json; indent=4",
    "text/html",
    "text/html, application/xhtml+xml",
    "application/*",
    "application/xml",
    "",
]
FORMATS = [None, "json", "html", "api"]


def chosen(negotiation, accept, format_):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    query = {} if format_ is None else {"format": format_}
    request = Request(RequestFactory().get("/api/v1/recall", query, **headers))
    try:
        renderer, media_type = negotiation.select_renderer(request, [FastJSONRenderer()])
    except (APIException, Http404) as refused:
        return type(refused), getattr(refused, "status_code", 404)
    return type(renderer), media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("format_", FORMATS)
def test_every_request_is_negotiated_as_drf_does(accept, format_):
    ours = chosen(JSONFirstNegotiation(), accept, format_)
    assert ours == chosen(DefaultContentNegotiation(), accept, format_)


def test_the_api_negotiates_so():
    assert api_settings.DEFAULT_CONTENT_NEGOTIATION_CLASS is JSONFirstNegotiation


@pytest.mark.parametrize("suffix", ["json", "html"])
def test_a_format_suffix_is_negotiated_as_drf_does(suffix):
    def with_suffix(negotiation):
        request = Request(RequestFactory().get("/api/v1/recall"))
        try:
            return type(negotiation.select_renderer(request, [FastJSONRenderer()], suffix)[0])
        except Http404:
            return Http404

    assert with_suffix(JSONFirstNegotiation()) == with_suffix(DefaultContentNegotiation())


def test_no_renderer_is_refused_as_drf_does():
    request = Request(RequestFactory().get("/api/v1/recall"))
    for negotiation in (JSONFirstNegotiation(), DefaultContentNegotiation()):
        with pytest.raises(NotAcceptable):
            negotiation.select_renderer(request, [])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("accept", "status"),
    [(None, 200), ("*/*", 200), ("application/json", 200), ("text/html", 406)],
)
def test_a_recall_answers_json_or_refuses_as_before(client, member, accept, status):
    headers = bearer(member) | ({} if accept is None else {"HTTP_ACCEPT": accept})
    response = client.get("/api/v1/recall", {"domain": "acme.dev"}, **headers)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
