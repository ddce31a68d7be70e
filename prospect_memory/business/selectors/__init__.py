"""Reads of business memory. Every query filters by the acting account, and a member layer
by the acting member: no one else (not another member, not an admin's token, not staff)
reads, counts or ranks a member's own context.

Expired entries disappear from every read at once (``expires_at`` is compared with the
database's clock in the query); evicted and expired entries only appear in the evictions
list, for restore.

- ``recall``: one entry by key, and its kept versions;
- ``listing``: the live entries a page at a time, the evictions, deleted keys;
- ``search``: entries by meaning, and the promoted entries knowledge search reads;
- ``statements``: the prepared statements they run and the view a row becomes.
"""
