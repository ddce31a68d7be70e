"""One wording for bad input, whichever memory or check finds it: every problem begins with
its field and says what to send; the message is the first problem, with how many more."""

import pytest

pytestmark = pytest.mark.django_db


def problems_of(response) -> tuple[str, dict]:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    return error["message"], error["details"]["fields"]


def assert_each_begins_with_its_field(fields: dict) -> None:
    for field, messages in fields.items():
        for message in messages:
            assert message.startswith(field), (field, message)


def test_the_notes_rules(api):
    message, fields = problems_of(
        api.call(
            "post",
            "/api/v1/notes",
            "/api/v1/notes",
            {"domain": "acme.dev", "body": " ", "source_urls": [], "observed_at": "2099-01-01"},
        )
    )
    assert message.startswith("body is required")
    assert message.endswith("more problems, see details).")
    assert {"body", "observed_at"} <= set(fields)
    assert_each_begins_with_its_field(fields)


def test_business_memorys_rules(api):
    message, fields = problems_of(
        api.call(
            "post",
            "/api/v1/business-memory/entries",
            "/api/v1/business-memory/entries",
            {"key": "icp", "value": 1, "source": {"extracted_at": "2099-01-01T00:00:00Z"}},
        )
    )
    assert message == ("source.extracted_at is in the future; give when it was extracted.")
    assert_each_begins_with_its_field(fields)


def test_a_missing_argument_is_said_of_its_field(api):
    message, fields = problems_of(
        api.call("post", "/api/v1/notes", "/api/v1/notes", {"domain": "acme.dev"})
    )
    assert message.startswith(
        "Invalid arguments for outreach_save_prospect_research: body: is required"
    )
    assert {"body", "source_urls", "observed_at"} <= set(fields)
    assert_each_begins_with_its_field(fields)


def test_knowledge_search(api):
    message, fields = problems_of(
        api.call("get", "/api/v1/knowledge/search?query=%20", "/api/v1/knowledge/search")
    )
    assert message == "query must be text of 1 to 1,000 characters."
    assert_each_begins_with_its_field(fields)


def test_the_schema_checks_of_every_operation(api):
    message, fields = problems_of(
        api.call("get", "/api/v1/knowledge/search?query=ok&limit=50", "/api/v1/knowledge/search")
    )
    assert message.startswith("Invalid arguments for outreach_search_knowledge: limit: ")
    assert_each_begins_with_its_field(fields)


@pytest.mark.parametrize(
    ("body", "field", "said"),
    [
        (
            {"key": "icp", "value": 1, "colour": "red"},
            "(arguments)",
            "unknown argument(s) colour; allowed: category, confidence,",
        ),
        (
            {"key": "icp", "value": 1, "source": {"pipeline": "p1"}},
            "source",
            "unknown argument(s) pipeline; allowed: execution_id, extracted_at, pipeline_id,",
        ),
    ],
)
def test_an_unknown_argument_is_named_with_those_its_object_takes(api, body, field, said):
    _, fields = problems_of(
        api.call("post", "/api/v1/business-memory/entries", "/api/v1/business-memory/entries", body)
    )
    assert fields[field][0].startswith(f"{field}: {said}")
