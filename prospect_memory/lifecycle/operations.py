"""The data lifecycle's operations, declared once and served by the REST adapter and the
pages. An erasure is a person's decision: never an MCP tool, and over REST a signed-in
session, never an agent's token (an agent steered by a page it read must not be able to
make the account forget); operators have ``manage.py erase_company``."""

from __future__ import annotations

from outreach import scopes
from outreach.access import MODULE_ADMIN, Actor
from outreach.errors import ValidationFailed
from outreach.operations import Operation
from outreach.schema import INTEGER, STRING, closed_object
from prospect_memory.lifecycle.erase import erase_company
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import InvalidDomain
from prospect_memory.notes.schemas import DOMAIN_INPUT

ERASE_COMPANY_INPUT = closed_object(
    {
        "domain": DOMAIN_INPUT,
        "confirm": {
            "type": "string",
            "maxLength": 2048,
            "description": "The company's domain typed again (acme.dev): an erasure cannot "
            "be undone.",
        },
    }
)

ERASED = closed_object(
    {
        "erased": closed_object(
            {
                "domain": STRING,
                "erasure_id": INTEGER,
                "counts": {"type": "object", "additionalProperties": INTEGER},
            }
        )
    }
)


def _erase_company(actor: Actor, arguments: dict) -> dict:
    domain = resolve_domain(arguments["domain"]).domain
    try:
        confirmed = resolve_domain(arguments["confirm"]).domain
    except InvalidDomain:
        confirmed = None
    if confirmed != domain:
        message = (
            f"confirm: type the company's domain, {domain!r}, to confirm; an erasure removes "
            "every note, archived note and compaction of it and cannot be undone"
        )
        raise ValidationFailed(message, details={"fields": {"confirm": [message]}})
    erased = erase_company(actor=actor, domain=domain)
    return {"erased": {"domain": domain, "erasure_id": erased.erasure_id, "counts": erased.counts}}


ERASE_COMPANY = Operation(
    name="outreach_erase_company",
    title="Erase everything the account knows about a company",
    description=(
        "Removes every note of the domain (active and archived), its compactions, their "
        "vectors, and the audit and usage events that name it. Kit keeps who erased, when "
        "and how many rows went, never the content or the domain. Cannot be undone. A "
        "person's decision: a signed-in session, not an agent's token."
    ),
    input_schema=ERASE_COMPANY_INPUT,
    data_schema=ERASED,
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_erase_company,
    destructive=True,
    people_only=True,
    refusals=(InvalidDomain, ValidationFailed),
)
