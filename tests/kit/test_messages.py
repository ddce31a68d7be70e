"""A message added while answering one request is shown by the next; a request that adds
or reads none leaves no trace of the messages framework (``kit.middleware.MessagesMiddleware``)."""

from __future__ import annotations

import pytest
from django.contrib import messages
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.test import RequestFactory
from django.utils.functional import empty

from kit.middleware import MessagesMiddleware

pytestmark = pytest.mark.django_db


def _answer(view, cookies=None):
    request = RequestFactory().get("/business/")
    request.COOKIES.update(cookies or {})
    response = SessionMiddleware(MessagesMiddleware(view))(request)
    return request, response


def _adds(request):
    messages.success(request, "Stored brand_voice.")
    return HttpResponse("stored")


def _shows(request):
    return HttpResponse(" | ".join(str(message) for message in messages.get_messages(request)))


def _ignores(request):
    return HttpResponse("nothing said")


def test_a_message_added_in_one_answer_is_shown_by_the_next_and_then_gone():
    _, added = _answer(_adds)
    cookies = {name: morsel.value for name, morsel in added.cookies.items()}
    assert "messages" in cookies
    _, shown = _answer(_shows, cookies)
    assert shown.content == b"Stored brand_voice."
    assert shown.cookies["messages"].value == ""  # read, so cleared
    _, again = _answer(_shows, {"messages": shown.cookies["messages"].value})
    assert again.content == b""


def test_an_answer_that_says_nothing_makes_no_storage_and_sets_no_cookie():
    request, response = _answer(_ignores)
    assert request._messages._wrapped is empty  # a lazy storage, never made
    assert not response.cookies
    assert "Set-Cookie" not in response


def test_an_unread_message_is_kept_for_a_later_answer():
    _, added = _answer(_adds)
    cookies = {name: morsel.value for name, morsel in added.cookies.items()}
    _, ignored = _answer(_ignores, cookies)
    assert "messages" not in ignored.cookies  # untouched: the browser keeps its cookie
    _, shown = _answer(_shows, cookies)
    assert shown.content == b"Stored brand_voice."
