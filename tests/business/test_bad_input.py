"""Every malformed argument gets its specific error and changes nothing, over REST (the
whole path: schema, rules, service) and directly against the service."""

import json

import pytest

from prospect_memory.business.errors import ValueTooLarge
from prospect_memory.business.models import Entry, EntryVersion
from prospect_memory.business.services.store import entry_store

pytestmark = pytest.mark.django_db

URL = "/api/v1/business-memory/entries"


@pytest.fixture
def post(client, bearer):
    def send(body, raw=False):
        data = body if raw else json.dumps(body)
        return client.post(URL, data, content_type="application/json", **bearer)

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
        ({"strategy": "restore"}, 400, "validation_error", "strategy"),
        ({"strategy": "demote"}, 400, "validation_error", "strategy"),
        ({"expected_version": -1}, 400, "validation_error", "expected_version"),
        ({"expected_version": "1"}, 400, "validation_error", "expected_version"),
        ({"source": "crm"}, 400, "validation_error", "source"),
        ({"source": {"pipeline_id": "p" * 201}}, 400, "validation_error", "source.pipeline_id"),
        ({"source": {"extracted_at": "2099-01-01T00:00:00Z"}}, 400, "validation_error", None),
        ({"source": {"extracted_at": "yesterday"}}, 400, "validation_error", None),
        # Year 1 at +14:00 is before year 1 in UTC: no database can store it.
        ({"source": {"extracted_at": "0001-01-01T00:00:00+14:00"}}, 400, "validation_error", None),
        ({"source": {"extracted_at": "1969-12-31T23:59:59Z"}}, 400, "validation_error", None),
        ({"source": {"pipeline_id": "run\x00 1"}}, 400, "validation_error", "source.pipeline_id"),
        ({"source": {"step_id": "a\nb"}}, 400, "validation_error", "source.step_id"),
        ({"source": {"execution_id": ""}}, 400, "validation_error", "source.execution_id"),
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


@pytest.mark.parametrize("existing", [False, True])
def test_an_append_never_stores_a_value_deeper_than_the_limit(post, existing):
    if existing:
        assert post({"key": "log", "value": [], "strategy": "overwrite"}).status_code == 201
    as_deep_as_allowed = {"a": deep(30)}  # 32 levels: taken alone
    reply = post({"key": "log", "value": as_deep_as_allowed, "strategy": "append"})
    assert reply.status_code == 400
    assert "nest deeper than 32 levels" in reply.json()["error"]["details"]["fields"]["value"][0]
    assert Entry.objects.filter(key="log").count() == int(existing)
    assert not Entry.objects.filter(key="log", version__gt=1).exists()


def test_a_key_is_lower_cased(admin_actor):
    assert entry_store(actor=admin_actor, key="Deal:Score.V2-a_b", value=1).entry.key == (
        "deal:score.v2-a_b"
    )


def test_ttl_at_its_limits_is_taken(admin_actor):
    longest = entry_store(actor=admin_actor, key="a", value=1, ttl_seconds=31_622_400)
    shortest = entry_store(actor=admin_actor, key="b", value=1, ttl_seconds=60)
    assert longest.entry.expires_at > shortest.entry.expires_at


def test_an_extraction_time_in_another_zone_is_kept_in_utc(admin_actor):
    stored = entry_store(
        actor=admin_actor, key="k", value=1, source={"extracted_at": "2026-11-04T10:00:00-05:00"}
    )
    assert stored.entry.source.extracted_at.isoformat() == "2026-11-04T15:00:00+00:00"


def test_a_merge_of_the_wrong_type_is_a_409_over_rest(post, admin_actor):
    entry_store(actor=admin_actor, key="k", value="ten")
    response = post({"key": "k", "value": 1, "strategy": "increment"})
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "merge_type_mismatch"
    assert error["details"] == {
        "strategy": "increment",
        "stored_type": "string",
        "given_type": "number",
    }
    assert Entry.objects.get().version == 1


def test_an_increment_past_64_bits_downwards_changes_nothing(admin_actor):
    from outreach.errors import ValidationFailed

    entry_store(actor=admin_actor, key="counter", value=-(2**63) + 1)
    with pytest.raises(ValidationFailed) as refused:
        entry_store(actor=admin_actor, key="counter", value=-2, strategy="increment")
    assert refused.value.details["reason"] == "overflow"


def test_a_huge_integer_added_to_a_float_changes_nothing(admin_actor):
    from outreach.errors import ValidationFailed

    entry_store(actor=admin_actor, key="score", value=0.5)
    with pytest.raises(ValidationFailed) as refused:
        entry_store(actor=admin_actor, key="score", value=10**400, strategy="increment")
    assert refused.value.details["reason"] == "not_finite"
    assert Entry.objects.get().value == 0.5
