"""Prospect memory over REST: each endpoint serves operations declared once in
``prospect_memory.notes.operations``, with the same arguments and answers as the MCP tools."""

from __future__ import annotations

from outreach.api import OperationApi, serve
from prospect_memory.notes import operations


class DossierRecallApi(OperationApi):
    get = serve(operations.RECALL, operation_id="recall")


class NotesApi(OperationApi):
    """The collection of notes: list them (read) or save one (write)."""

    get = serve(operations.NOTES_LIST, operation_id="notes_list")
    post = serve(operations.NOTE_SAVE, operation_id="notes_save", status=201)


class NoteDeleteApi(OperationApi):
    delete = serve(operations.NOTE_DELETE, operation_id="notes_delete", path=("note_id",))


class NoteUnflagApi(OperationApi):
    post = serve(operations.NOTE_UNFLAG, operation_id="notes_unflag", path=("note_id",))


class DossierCompactApi(OperationApi):
    post = serve(
        operations.DOSSIER_COMPACT,
        operation_id="compactions_create",
        status=201,
    )


class CompactionRestoreApi(OperationApi):
    post = serve(
        operations.COMPACTION_RESTORE,
        operation_id="compactions_restore",
        path=("compaction_id",),
    )
