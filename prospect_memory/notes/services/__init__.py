"""Writes of prospect memory, by concern.

- ``dossiers``: the steps every write on a domain shares (the dossier lock, the count, a
  new note); each write records its ``AuditEvent`` through the event base's writer;
- ``notes``: saving and deleting notes, clearing flags, and counting agent recalls;
- ``compaction``: merging a dossier's notes and undoing a merge.

Re-encrypting under the newest key is the core's (``core.crypto.rotation``), for every memory.

Each write on a domain locks that domain's :class:`~prospect_memory.notes.models.Dossier` row
first, so the per-domain cap, the compaction count check and restores see one order of
events. The embedding provider is called before any lock is taken (a slow provider must
never hold a lock), and every write is one transaction: nothing is ever half-written.
"""
