"""Prospect memory's MCP tools, registered into outreach's registry at ``ready()``.

Each handler calls the same service or selector as the REST API.
"""

from __future__ import annotations

from outreach.access import MODULE_ADMIN
from outreach.mcp.registry import READ, WRITE, Tool, ToolCall, registry
from prospect_memory import schemas
from prospect_memory.selectors import dossier_recall, recall_data
from prospect_memory.services import dossier_compact, note_save, recall_record


def _recall(call: ToolCall) -> dict:
    args = call.arguments
    recall = dossier_recall(actor=call.actor, domain=args["domain"], query=args.get("query"))
    recall_record(actor=call.actor, recall=recall)
    return recall_data(recall)


def _save(call: ToolCall) -> dict:
    args = call.arguments
    return note_save(
        actor=call.actor,
        domain=args["domain"],
        body=args["body"],
        title=args.get("title"),
        source_urls=args["source_urls"],
        observed_at=args["observed_at"],
    ).as_data()


def _compact(call: ToolCall) -> dict:
    args = call.arguments
    return dossier_compact(
        actor=call.actor,
        domain=args["domain"],
        expected_note_count=args["expected_note_count"],
        body=args["body"],
        title=args.get("title"),
        note_ids=args.get("note_ids"),
    ).as_data()


RECALL = Tool(
    name="outreach_recall_prospect_context",
    title="Recall what Kit knows about a company",
    description=(
        "Call this first, before any web research on a company. Returns the account's "
        "research notes for the company (newest observed first, each marked stale after 30 "
        "days), overlapping note pairs, and the relationship: campaigns, messages sent, the "
        "last reply and suppressions. If should_stop is true, do not research or write to "
        "this company; say why and move on. Reuse fresh notes instead of searching again; "
        "research only what is missing or stale."
    ),
    input_schema=schemas.RECALL_INPUT,
    data_schema=schemas.RECALL,
    scope=READ,
    handler=_recall,
    read_only=True,
    idempotent=True,
)

SAVE = Tool(
    name="outreach_save_prospect_research",
    title="Save one research finding about a company",
    description=(
        "Save one verified finding per call: a short markdown note with 1-20 source URLs and "
        "observed_at, the date the fact was true. Read the overlap in the answer: "
        "near_duplicates means the finding was already known (do not save it again); "
        "overlaps and shared_sources point at related notes. If semantic_check is partial, "
        "empty buckets are not proof the finding is new. compaction_suggested means the "
        "dossier is getting long; tell the user, but do not compact unless they ask."
    ),
    input_schema=schemas.SAVE_INPUT,
    data_schema=schemas.SAVE,
    scope=WRITE,
    role=MODULE_ADMIN,
    handler=_save,
)

COMPACT = Tool(
    name="outreach_compact_prospect_context",
    title="Merge a company's notes into one (only when asked)",
    description=(
        "Only when the user asks for it: replace a company's notes with one merged note you "
        "wrote from the latest recall. Pass expected_note_count = the note_count of that "
        "recall; if notes changed since, nothing happens and the error gives the current "
        "count, so recall again and rebuild the merge. The merged note keeps every source URL "
        "and the earliest observed_at; the replaced notes are archived and can be restored."
    ),
    input_schema=schemas.COMPACT_INPUT,
    data_schema=schemas.COMPACT,
    scope=WRITE,
    role=MODULE_ADMIN,
    handler=_compact,
    destructive=True,
)


def register() -> None:
    for tool in (RECALL, SAVE, COMPACT):
        registry.register(tool)
