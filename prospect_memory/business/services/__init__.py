"""Writes of business memory, one module per verb, then the steps they share.

The verbs:

- ``store``: storing an entry (merged by strategy, version-checked, under the layer's
  lock), and ``store_round_trip``: the same store sent as one statement when what it read
  before the lock still holds;
- ``delete``: deleting a live entry for good;
- ``restore``: bringing an entry back (a kept version, an eviction, a merge undone);
- ``integrity``: holding flagged text out of the shared layer, clearing flags, checking
  what is stored again;
- ``consolidate``: the periodic job that demotes, merges and purges.

The steps every write of a layer shares, each named for what it holds:

- ``lock``: the layer's lock (its ``Shelf`` row), what a write reads under it, and the
  prepared statements of those reads;
- ``promotion``: an entry's place in the knowledge index, written with the write or after
  its commit;
- ``places``: where a layer's entries are, for the ORM and in SQL;
- ``counts``: a layer's counts and the rule that a new entry fits its capacity;
- ``eviction``: entries leaving a layer, and room made under its capacity;
- ``aliases``: keys merged into another entry;
- ``history``: an entry's kept versions;
- ``events``: who did what to an entry;
- ``entry_fields``: what a write sets on an entry, and the version refusal.

Every write takes its layer's lock first and is one transaction: nothing is ever
half-written. The embedding provider is called before any lock (a slow provider must
never hold one). Re-encrypting under the newest key is the core's, for every memory.
"""
