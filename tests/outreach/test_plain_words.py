"""Every validation message of every tool names its field and says, in words, what to pass
(SPEC 18): no regular expression, schema keyword or Python value in what an agent reads.

The bad values are made from each tool's own input schema, so a new tool or argument is
walked without touching this test."""

from __future__ import annotations

import pytest

from outreach import scopes
from outreach.access import Actor
from outreach.errors import KitError
from outreach.mcp.registry import registry
from outreach.operations import execute
from tests.helpers import assert_plain_words

pytestmark = pytest.mark.django_db


def bad_values(schema: dict) -> list:
    """Values that break each rule of one property's schema, one rule at a time."""
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or []
    values: list = []
    if kinds:
        values.append(42 if "string" in kinds else "x" if "null" not in kinds else [])
    if "integer" in kinds:
        values += [2.5, True]
    if "not" in schema:
        values.append(None)
    if "minLength" in schema:
        values.append("")
    if "maxLength" in schema:
        values.append("x" * (schema["maxLength"] + 1))
    if "pattern" in schema:
        values += ["-bad value!", "a\u0000b"]
    if "enum" in schema:
        values.append("nope")
    if "minimum" in schema:
        values.append(schema["minimum"] - 1)
    if "maximum" in schema:
        values.append(schema["maximum"] + 1)
    if "minItems" in schema:
        values.append([])
    if "items" in schema:
        values += [[42], [item for item in bad_values(schema["items"]) if item != 42][:1]]
    if schema.get("uniqueItems") and "enum" in schema.get("items", {}):
        values.append([schema["items"]["enum"][0]] * 2)
    if "properties" in schema:
        values.append({"colour": "red"})
        values += [
            {name: value} for name, sub in schema["properties"].items() for value in bad_values(sub)
        ]
    return values


def calls():
    for operation in registry.all():
        yield operation, {}
        yield operation, {"colour": "red"}
        for name, schema in operation.input_schema["properties"].items():
            for value in bad_values(schema):
                yield operation, {name: value}


def test_every_schema_problem_of_every_tool_is_said_in_words(module_admin):
    actor = Actor.for_member(module_admin)
    walked = 0
    for operation, arguments in calls():
        try:
            execute(operation, actor=actor, granted=scopes.ALL, arguments=arguments)
        except KitError as error:
            problems = error.details.get("fields", {})
            for field, messages in problems.items():
                for message in messages:
                    assert message.startswith(f"{field}:"), message
                    assert_plain_words(message)
                    walked += 1
            assert_plain_words(error.message)
    assert walked > 150


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"query": "x", "limit": 2.5}, "limit: must be a whole number, not 2.5"),
        ({"query": "x", "limit": True}, "limit: must be a whole number, not true or false"),
        ({"query": "x", "kinds": ["secrets"]}, 'kinds.0: "secrets" is not one of business_memory'),
        ({}, "query: is required: The question, in words"),
        ({"query": "x", "\u202eevil": 1}, 'unknown argument(s) "\ufffdevil"'),
    ],
)
def test_what_a_message_says(module_admin, arguments, said):
    """Messages say what was sent and what to send, and never echo a hidden character."""
    operation = registry.get("outreach_search_knowledge")
    with pytest.raises(KitError) as refused:
        execute(
            operation, actor=Actor.for_member(module_admin), granted=scopes.ALL, arguments=arguments
        )
    messages = [m for found in refused.value.details["fields"].values() for m in found]
    assert any(said in message for message in messages), messages
