"""Writes of prospect memory, by concern.

- ``dossiers``: the steps every write on a domain shares (the dossier lock, the count,
  the audit event, a new note);
- ``notes``: saving and deleting notes, and counting agent recalls;
- ``compaction``: merging a dossier's notes and undoing a merge;
- ``keys``: re-encrypting notes under the newest key.

Each write on a domain locks that domain's :class:`~prospect_memory.notes.models.Dossier` row
first, so the per-domain cap, the compaction count check and restores see one order of
events. The embedding provider is called before any lock is taken (a slow provider must
never hold a lock), and every write is one transaction: nothing is ever half-written.
"""
