"""Business memory over REST: the same operations and answers as the MCP tools, plus
delete, history and the restores."""

from __future__ import annotations

from outreach.api import OperationApi, serve
from prospect_memory.business import operations


class EntriesApi(OperationApi):
    """The collection of entries: list them (read) or store one (write)."""

    get = serve(operations.LIST, operation_id="business_memory_list")
    post = serve(
        operations.STORE,
        operation_id="business_memory_store",
        created_when=lambda data: data["created"],
    )


class EntryApi(OperationApi):
    get = serve(operations.RECALL, operation_id="business_memory_recall", path=("key",))
    delete = serve(operations.DELETE, operation_id="business_memory_delete", path=("key",))


class EntryHistoryApi(OperationApi):
    get = serve(operations.HISTORY, operation_id="business_memory_history", path=("key",))


class VersionRestoreApi(OperationApi):
    post = serve(
        operations.RESTORE_VERSION,
        operation_id="business_memory_restore_version",
        path=("key", "version"),
    )


class SearchApi(OperationApi):
    get = serve(operations.SEARCH, operation_id="business_memory_search")


class EvictionsApi(OperationApi):
    get = serve(operations.EVICTIONS, operation_id="business_memory_evictions")


class EvictionRestoreApi(OperationApi):
    post = serve(
        operations.RESTORE_EVICTION,
        operation_id="business_memory_restore_eviction",
        path=("entry_id",),
    )


class MergeUndoApi(OperationApi):
    post = serve(operations.UNDO_MERGE, operation_id="business_memory_undo_merge", path=("key",))


class EntryUnflagApi(OperationApi):
    post = serve(operations.UNFLAG, operation_id="business_memory_unflag", path=("key",))
