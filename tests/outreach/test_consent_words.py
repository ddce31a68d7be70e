"""The consent page says in plain words everything the requested scopes allow (SPEC 18):
prospect research, the account's business memory and the member's own, knowledge search."""

from html import unescape

import pytest
from django.test import Client

from tests.oauth_client import Authorization, register

pytestmark = pytest.mark.django_db

READS = [
    "research saved about companies",
    "the account's business memory",
    "your own private context",
    "search across all of it",
    "writing guides",
    "if you administer Outreach, export all of it",
]
WRITES = [
    "Save, merge, delete and restore research about companies",
    "store, delete and restore business memory",
    "the account's shared memory if you administer Outreach",
]


def consent_page(member, scope: str) -> str:
    flow = Authorization(register(Client()).json()["client_id"])
    browser = Client()
    browser.force_login(member.user)
    page = browser.get(flow.url.replace("outreach_read+outreach_write", scope))
    assert page.status_code == 200
    return unescape(page.content.decode())


def test_read_and_write_name_every_memory(module_admin):
    page = consent_page(module_admin, "outreach_read+outreach_write")
    for words in READS + WRITES:
        assert words in page


def test_read_only_names_no_writes(module_admin):
    page = consent_page(module_admin, "outreach_read")
    for words in READS:
        assert words in page
    for words in WRITES:
        assert words not in page


def test_a_scope_asked_twice_is_listed_once(module_admin):
    page = consent_page(module_admin, "outreach_read+outreach_read+outreach_read")
    assert page.count(READS[0]) == 1
