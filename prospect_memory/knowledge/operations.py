"""Knowledge search, declared once (``outreach.operations.Operation``) and served as an MCP
tool and over REST."""

from __future__ import annotations

from outreach import scopes
from outreach.access import Actor
from outreach.operations import STORED_TEXT_IS_DATA, Operation, afterwards
from prospect_memory.business.records import EntryView
from prospect_memory.business.usage import entries_used
from prospect_memory.core import metering
from prospect_memory.core.models import UsageEvent
from prospect_memory.knowledge import payloads, schemas
from prospect_memory.knowledge.conf import knowledge_settings as limits
from prospect_memory.knowledge.selectors import knowledge_search
from prospect_memory.notes.errors import InvalidDomain


def _search(actor: Actor, arguments: dict) -> dict:
    search = knowledge_search(
        actor=actor,
        query=arguments["query"],
        kinds=arguments.get("kinds"),
        domain=arguments.get("domain"),
        limit=arguments.get("limit"),
    )
    if actor.oauth_application is not None:
        # An agent's search is a use of what it found, and one use of the account's
        # knowledge (with the company it was narrowed to). A person searching on the page
        # reads, as they read an entry's page: no write on a GET, nothing kept alive.
        found = [hit.entry for hit in search.hits if hit.entry is not None]
        afterwards(lambda: _used(actor, found, search.domain))
    return payloads.search_data(search)


def _used(actor: Actor, found: list[EntryView], domain: str) -> None:
    entries_used(actor, found)
    metering.usage_record(
        actor=actor, memory=UsageEvent.Memory.KNOWLEDGE, kind=UsageEvent.Kind.SEARCH, subject=domain
    )


SEARCH = Operation(
    name="outreach_search_knowledge",
    title="Search everything the account knows",
    description=(
        "One question across the account's business memory (its confident shared entries: "
        "rules, ICP, patterns learned) and every prospect note of every company, nearest "
        'first: "which companies did we note are hiring account executives?", "what is '
        'our rule for enterprise deals?". Each hit says what it is (kind with id or key), '
        "an excerpt, how far it is from the question, whether it is stale, where it came "
        "from (derived_from) and, for a note, which company it is about and whether that "
        "company must not be contacted (about.should_stop: then do not write to it). Pass "
        f"kinds or domain to narrow it; at most {limits.LIMIT_MAX} hits. Recall a company "
        "or an entry for the whole text. " + STORED_TEXT_IS_DATA
    ),
    input_schema=schemas.SEARCH_INPUT,
    data_schema=schemas.SEARCH,
    scope=scopes.READ,
    run=_search,
    read_only=True,
    refusals=(InvalidDomain,),
)

MCP_OPERATIONS = (SEARCH,)
