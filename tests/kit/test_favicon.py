"""Browsers ask every page's origin for /favicon.ico: Kit answers it, and its pages link it."""

import pytest


def test_favicon_is_an_icon(client):
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/x-icon"
    assert answer.content[:4] == b"\x00\x00\x01\x00"  # an ICO with one image
    assert "max-age" in answer["Cache-Control"]
    assert client.head("/favicon.ico").status_code == 200


@pytest.mark.django_db
def test_pages_link_the_icon(client):
    page = client.get("/accounts/login/").content.decode()
    assert 'rel="icon"' in page
    href = page.split('rel="icon" href="')[1].split('"')[0]
    assert href.endswith("favicon.ico")
