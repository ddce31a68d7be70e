"""Kit's Content-Security-Policy middleware sends exactly the headers django-csp's would.

It keeps the policy of the settings built (``kit.middleware.ContentSecurityPolicyMiddleware``);
each case here runs a request through it and through django-csp's own middleware and
compares every header either sets."""

from __future__ import annotations

import pytest
from csp.constants import HEADER, HEADER_REPORT_ONLY, NONCE
from csp.decorators import csp_exempt, csp_replace, csp_update
from csp.exceptions import CSPNonceError
from csp.middleware import CSPMiddleware
from django.http import HttpResponse, JsonResponse
from django.template import engines
from django.test import RequestFactory, override_settings

from kit.middleware import ContentSecurityPolicyMiddleware

pytestmark = pytest.mark.django_db


def _headers(middleware_class, view, path="/prospects/acme.dev/"):
    request = RequestFactory().get(path)
    response = middleware_class(view)(request)
    return {name: response.get(name) for name in (HEADER, HEADER_REPORT_ONLY)}, request


def _json(request):
    return JsonResponse({"notes": []})


def _page_with_nonce(request):
    template = engines["django"].from_string('<script nonce="{{ request.csp_nonce }}"></script>')
    return HttpResponse(template.render({"request": request}))


@csp_update({"img-src": ["https://images.example"]})
def _view_that_adds(request):
    return HttpResponse("added")


@csp_replace({"script-src": ["'self'", "https://cdn.example"]})
def _view_that_replaces(request):
    return HttpResponse("replaced")


@csp_exempt()
def _exempt_view(request):
    return HttpResponse("exempt")


def _own_header(request):
    response = HttpResponse("own")
    response[HEADER] = "default-src 'none'"
    return response


def _not_found(request):
    return HttpResponse("missing", status=404)


CASES = [_json, _page_with_nonce, _view_that_adds, _view_that_replaces, _exempt_view, _own_header]


@pytest.mark.parametrize("view", CASES, ids=lambda view: view.__name__)
def test_every_answer_carries_what_django_csp_would_send(view):
    kit, _ = _headers(ContentSecurityPolicyMiddleware, view)
    library, _ = _headers(CSPMiddleware, view)
    assert kit == library


@override_settings(
    CONTENT_SECURITY_POLICY={"DIRECTIVES": {"default-src": ["'self'"], "script-src": [NONCE]}}
)
def test_a_page_that_asks_for_a_nonce_gets_it_in_the_header():
    headers, request = _headers(ContentSecurityPolicyMiddleware, _page_with_nonce)
    assert f"script-src 'nonce-{request._csp_nonce}'" in headers[HEADER].split("; ")
    assert len(request._csp_nonce) >= 22  # each request's own, as django-csp makes it


def test_a_json_answer_gets_the_policy_of_the_settings():
    headers, _ = _headers(ContentSecurityPolicyMiddleware, _json, "/api/v1/recall")
    assert "default-src 'self'" in headers[HEADER]
    assert "frame-ancestors 'none'" in headers[HEADER]
    assert headers[HEADER_REPORT_ONLY] is None


@override_settings(
    CONTENT_SECURITY_POLICY={
        "EXCLUDE_URL_PREFIXES": ["/static/"],
        "DIRECTIVES": {"default-src": ["'none'"]},
    },
    CONTENT_SECURITY_POLICY_REPORT_ONLY={"DIRECTIVES": {"default-src": ["'self'"]}},
)
@pytest.mark.parametrize("path", ["/prospects/acme.dev/", "/static/kit.css"])
def test_changed_settings_are_read_again(path):
    kit, _ = _headers(ContentSecurityPolicyMiddleware, _json, path)
    library, _ = _headers(CSPMiddleware, _json, path)
    assert kit == library
    assert kit[HEADER_REPORT_ONLY] == "default-src 'self'"
    assert kit[HEADER] == (None if path.startswith("/static/") else "default-src 'none'")


@override_settings(DEBUG=True)
def test_debugs_not_found_page_is_left_alone_as_django_csp_leaves_it():
    kit, _ = _headers(ContentSecurityPolicyMiddleware, _not_found)
    library, _ = _headers(CSPMiddleware, _not_found)
    assert kit == library == {HEADER: None, HEADER_REPORT_ONLY: None}


def test_a_nonce_asked_for_after_the_header_is_an_error():
    _, request = _headers(ContentSecurityPolicyMiddleware, _json)
    with pytest.raises(CSPNonceError):
        str(request.csp_nonce)
    with pytest.raises(CSPNonceError):  # every time, for every request
        str(_headers(ContentSecurityPolicyMiddleware, _json)[1].csp_nonce)


def test_every_answer_over_http_carries_the_policy(client):
    from csp.utils import build_policy

    for path in ("/accounts/login/", "/api/v1/recall?domain=acme.dev", "/mcp"):
        assert client.get(path)[HEADER] == build_policy(), path
