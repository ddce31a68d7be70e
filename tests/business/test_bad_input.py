"""Every malformed argument gets its specific error and changes nothing, over REST (the
whole path: schema, rules, service) and directly against the service."""

import json

import pytest

from outreach.services import access_token_issue
from prospect_memory.business.errors import ValueTooLarge
from prospect_memory.business.models import Entry, EntryVersion
from prospect_memory.business.services import entry_store

pytestmark = pytest.mark.django_db

URL = "/api/v1/business-memory/entries"


@pytest.fixture
def post(client, module_admin):
    token = access_token_issue(
        member=module_admin,
        scopes=["outreach_read", "outreach_write"],
        client_name="REST client",
        expires_days=1,
        base_url="http://testserver",
    )

    def send(body, raw=False):
        data = body if raw else json.dumps(body)
        return client.post(
            URL, data, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
        )

    return send


def deep(levels: int):
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("changes", "status", "code", "field"),
    [
        ({"key": "\u0456cp"}, 400, "validation_error", "key"),  # Cyrillic i
        ({"key": "\u212aey"}, 400, "validation_error", "key"),  # Kelvin sign lower-cases to k
        ({"key": "ICP Definition"}, 400, "validation_error", "key"),
        ({"key": "_icp"}, 400, "validation_error", "key"),
        ({"key": "k" * 101}, 400, "validation_error", "key"),
        ({"key": ""}, 400, "validation_error", "key"),
        ({"value": None}, 400, "validation_error", "value"),
        ({"value": deep(40)}, 400, "validation_error", "value"),
        ({"value": "x" * 17_000}, 413, "value_too_large", None),
        ({"value": {f"k{i}": "v" * 100 for i in range(200)}}, 413, "value_too_large", None),
        ({"ttl_seconds": 0}, 400, "validation_error", "ttl_seconds"),
        ({"ttl_seconds": -1}, 400, "validation_error", "ttl_seconds"),
        ({"ttl_seconds": 366 * 86400 + 1}, 400, "validation_error", "ttl_seconds"),
        ({"ttl_seconds": 59}, 400, "validation_error", "ttl_seconds"),
        ({"ttl_seconds": "3600"}, 400, "validation_error", "ttl_seconds"),
        ({"confidence": 101}, 400, "validation_error", "confidence"),
        ({"confidence": -1}, 400, "validation_error", "confidence"),
        ({"confidence": "90"}, 400, "validation_error", "confidence"),
        ({"confidence": 90.5}, 400, "validation_error", "confidence"),
        ({"confidence": True}, 400, "validation_error", "confidence"),
        ({"category": "rumour"}, 400, "validation_error", "category"),
        ({"layer": "team"}, 400, "validation_error", "layer"),
        ({"strategy": "merge"}, 400, "validation_error", "strategy"),
        ({"strategy": "increment", "value": "ten"}, 400, "validation_error", "value"),
        ({"strategy": "max", "value": [1]}, 400, "validation_error", "value"),
        ({"strategy": "increment", "value": 2**64}, 400, "validation_error", "value"),
        ({"expected_version": -1}, 400, "validation_error", "expected_version"),
        ({"expected_version": "1"}, 400, "validation_error", "expected_version"),
        ({"source": "crm"}, 400, "validation_error", "source"),
        ({"source": {"pipeline_id": "p" * 201}}, 400, "validation_error", "source.pipeline_id"),
        ({"source": {"extracted_at": "2099-01-01T00:00:00Z"}}, 400, "validation_error", None),
        ({"source": {"extracted_at": "yesterday"}}, 400, "validation_error", None),
        ({"source": {"origin": "x"}}, 400, "validation_error", "source"),
        ({"colour": "red"}, 400, "validation_error", "(arguments)"),
    ],
)
def test_each_malformed_argument_is_refused_and_changes_nothing(post, changes, status, code, field):
    body = {"key": "icp_definition", "value": {"industry": ["SaaS"]}, **changes}
    response = post(body)
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    if field is not None:
        assert field in error["details"]["fields"], error
    assert not Entry.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"key": "k", "value": NaN}',
        '{"key": "k", "value": Infinity}',
        '{"key": "k", "value": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"key": "k", "value": "\\ud800"}',
        "[1, 2]",
    ],
)
def test_json_that_cannot_be_stored_is_a_400(post, raw):
    response = post(raw, raw=True)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert not Entry.objects.exists()


def test_every_problem_is_reported_at_once(admin_actor):
    from outreach.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as refused:
        entry_store(actor=admin_actor, key="Bad Key", value=None, confidence=101, ttl_seconds=0)
    assert set(refused.value.details["fields"]) == {"key", "value", "confidence", "ttl_seconds"}


def test_an_increment_past_64_bits_changes_nothing(admin_actor):
    from outreach.errors import ValidationFailed

    entry_store(actor=admin_actor, key="counter", value=2**63 - 10)
    with pytest.raises(ValidationFailed) as refused:
        entry_store(actor=admin_actor, key="counter", value=11, strategy="increment")
    assert refused.value.details["reason"] == "overflow"
    entry = Entry.objects.get()
    assert (entry.value, entry.version) == (2**63 - 10, 1)
    assert not EntryVersion.objects.exists()


def test_an_increment_to_infinity_changes_nothing(admin_actor):
    from outreach.errors import ValidationFailed

    entry_store(actor=admin_actor, key="score", value=1.5e308)
    with pytest.raises(ValidationFailed) as refused:
        entry_store(actor=admin_actor, key="score", value=1.5e308, strategy="increment")
    assert refused.value.details["reason"] == "not_finite"
    assert Entry.objects.get().value == 1.5e308


def test_an_append_that_grows_past_the_limit_changes_nothing(admin_actor):
    entry_store(actor=admin_actor, key="log", value=["x" * 10_000])
    with pytest.raises(ValueTooLarge):
        entry_store(actor=admin_actor, key="log", value="y" * 7_000, strategy="append")
    entry = Entry.objects.get()
    assert (len(entry.value), entry.version) == (1, 1)


def test_a_key_is_lower_cased(admin_actor):
    assert entry_store(actor=admin_actor, key="Deal:Score.V2-a_b", value=1).entry.key == (
        "deal:score.v2-a_b"
    )
