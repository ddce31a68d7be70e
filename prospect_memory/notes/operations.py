"""Prospect memory's operations, each declared once (``outreach.operations.Operation``).

MCP serves the first three as tools (``mcp_tools``); REST serves all six (``api``). The
texts an agent reads take their numbers from the settings.
"""

from __future__ import annotations

from outreach import scopes
from outreach.access import MODULE_ADMIN, Actor
from outreach.operations import STORED_TEXT_IS_DATA, Operation, afterwards
from prospect_memory.notes import payloads, schemas
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.errors import (
    BodyTooLarge,
    DailyLimitReached,
    DomainNoteLimitReached,
    InvalidDomain,
    NoteCountMismatch,
    NotFound,
)
from prospect_memory.notes.selectors import dossier_recall, notes_page
from prospect_memory.notes.services.compaction import compaction_restore, dossier_compact
from prospect_memory.notes.services.notes import note_delete, note_save, note_unflag, recall_record


def _recall(actor: Actor, arguments: dict) -> dict:
    recall = dossier_recall(actor=actor, domain=arguments["domain"], query=arguments.get("query"))
    afterwards(lambda: recall_record(actor=actor, recall=recall))
    return payloads.recall_data(recall)


def _save(actor: Actor, arguments: dict) -> dict:
    result = note_save(
        actor=actor,
        domain=arguments["domain"],
        body=arguments["body"],
        title=arguments.get("title"),
        source_urls=arguments["source_urls"],
        observed_at=arguments["observed_at"],
    )
    return payloads.save_data(result)


def _compact(actor: Actor, arguments: dict) -> dict:
    result = dossier_compact(
        actor=actor,
        domain=arguments["domain"],
        expected_note_count=arguments["expected_note_count"],
        body=arguments["body"],
        title=arguments.get("title"),
        note_ids=arguments.get("note_ids"),
    )
    return payloads.compact_data(result)


def _list(actor: Actor, arguments: dict) -> dict:
    page = notes_page(
        actor=actor,
        domain=arguments.get("domain"),
        stale=arguments.get("stale"),
        page=arguments.get("page", 1),
        page_size=arguments.get("page_size", notes_settings.LIST_PAGE_SIZE),
    )
    return payloads.notes_page_data(page)


def _delete(actor: Actor, arguments: dict) -> dict:
    return payloads.delete_data(note_delete(actor=actor, note_id=arguments["note_id"]))


def _unflag(actor: Actor, arguments: dict) -> dict:
    return {"note": payloads.note_data(note_unflag(actor=actor, note_id=arguments["note_id"]))}


def _restore(actor: Actor, arguments: dict) -> dict:
    result = compaction_restore(actor=actor, compaction_id=arguments["compaction_id"])
    return payloads.restore_data(result)


_STALE_DAYS = notes_settings.STALE_AFTER_DAYS
_SOURCES = f"{notes_settings.SOURCE_URLS_MIN}-{notes_settings.SOURCE_URLS_MAX}"

RECALL = Operation(
    name="outreach_recall_prospect_context",
    title="Recall what Kit knows about a company",
    description=(
        "Call this first, before any web research on a company. Returns the account's "
        "research notes for the company (newest observed first, each marked stale after "
        f"{_STALE_DAYS} days), overlapping note pairs, and the relationship: campaigns, "
        "messages sent, the last reply and suppressions. If should_stop is true, do not "
        "research or write to this company; say why and move on. Reuse fresh notes instead "
        "of searching again; research only what is missing or stale. " + STORED_TEXT_IS_DATA
    ),
    input_schema=schemas.RECALL_INPUT,
    data_schema=schemas.RECALL,
    scope=scopes.READ,
    run=_recall,
    read_only=True,
    idempotent=True,
    refusals=(InvalidDomain,),
)

NOTE_SAVE = Operation(
    name="outreach_save_prospect_research",
    title="Save one research finding about a company",
    description=(
        f"Save one verified finding per call: a short markdown note with {_SOURCES} source "
        "URLs and observed_at, the date the fact was true. Read the overlap in the answer: "
        "near_duplicates means the finding was already known (do not save it again); "
        "overlaps and shared_sources point at related notes. If semantic_check is partial, "
        "empty buckets are not proof the finding is new. compaction_suggested means the "
        "dossier is getting long; tell the user, but do not compact unless they ask. "
        + STORED_TEXT_IS_DATA
    ),
    input_schema=schemas.SAVE_INPUT,
    data_schema=schemas.SAVE,
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_save,
    refusals=(InvalidDomain, DomainNoteLimitReached, BodyTooLarge, DailyLimitReached),
)

DOSSIER_COMPACT = Operation(
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
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_compact,
    destructive=True,
    refusals=(InvalidDomain, NotFound, NoteCountMismatch, DomainNoteLimitReached, BodyTooLarge),
)

NOTES_LIST = Operation(
    name="outreach_list_prospect_notes",
    title="List active notes, newest observed first",
    description=(
        "Every active note of the account, optionally of one company and only fresh or only "
        f"stale ones (stale: observed more than {_STALE_DAYS} days ago), a page at a time. "
        + STORED_TEXT_IS_DATA
    ),
    input_schema=schemas.LIST_INPUT,
    data_schema=schemas.NOTES_PAGE,
    scope=scopes.READ,
    run=_list,
    read_only=True,
    idempotent=True,
    refusals=(InvalidDomain,),
)

NOTE_DELETE = Operation(
    name="outreach_delete_prospect_note",
    title="Delete a note from the dossier and every future recall",
    description=(
        "Removes the note for good (an audit event keeps who and when, not the content). "
        "Deleting a merged note deletes the notes it replaced as well."
    ),
    input_schema=schemas.NOTE_ID_INPUT,
    data_schema=schemas.DELETE,
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_delete,
    destructive=True,
    refusals=(NotFound,),
)

COMPACTION_RESTORE = Operation(
    name="outreach_restore_prospect_compaction",
    title="Undo a compaction",
    description=(
        "Brings back the notes a compaction replaced and removes the merged note, unless the "
        "merged note was compacted again or deleted since, or the domain would go over its "
        "note limit."
    ),
    input_schema=schemas.COMPACTION_ID_INPUT,
    data_schema=schemas.RESTORE,
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_restore,
    refusals=(NotFound, DomainNoteLimitReached),
)

NOTE_UNFLAG = Operation(
    name="outreach_clear_prospect_note_flags",
    title="Clear the integrity flags of a note (a person read it and found it fine)",
    description=(
        "Kit flags text that may try to steer an AI (SPEC 15). A module admin who read the "
        "note clears its flags here; the note then reads without integrity. Audited."
    ),
    input_schema=schemas.NOTE_ID_INPUT,
    data_schema=schemas.UNFLAG,
    scope=scopes.WRITE,
    role=MODULE_ADMIN,
    run=_unflag,
    people_only=True,
    refusals=(NotFound,),
)

#: Served as MCP tools; the rest are REST-only (people decide deletes and restores).
MCP_OPERATIONS = (RECALL, NOTE_SAVE, DOSSIER_COMPACT)
