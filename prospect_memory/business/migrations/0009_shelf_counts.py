"""Each shelf counts its layer's entries by status, kept exact by the database.

One trigger function on the entries table: a statement's inserted and deleted rows are
counted per layer from its transition tables (one update of each shelf it touched, however
many rows: a bulk import, a purge, an account's erasure), and an entry whose status, expiry
or layer changes moves between the counts (a row trigger, fired only when one of them
differs). It only ever updates shelves: a layer without one (never written, or erased in
the same transaction, before its entries) has nothing to count; a shelf made after its
layer's entries starts uncounted (NULL) and is counted by its next store of a new key. The function
keeps the search path it was created with, so a session that empties its own (a restore
script) still finds the shelves.

The counts are filled in the transaction that creates the triggers: creating them locks the
entries table against writes until it commits, so nothing changes between the two.
"""

from django.db import migrations, models


def _shares(of: str) -> str:
    """Each row's share of the three counts (``of`` a row: one, or its ``n``)."""
    share = "coalesce({of} FILTER (WHERE {where}), 0)"
    return ", ".join(
        f"{share.format(of=of, where=where)} AS {name}"
        for name, where in (
            ("live", "status = 'live'"),
            ("gone", "status IN ('evicted', 'expired')"),
            ("expiring", "status = 'live' AND expires_at IS NOT NULL"),
        )
    )


def _add(rows: str, of: str, sign: str = "+") -> str:
    """Add (``sign``) the shares of ``rows`` to the shelves they belong to: the account's
    layer and members' layers apart, so each finds its shelf by the unique index."""
    changes = ", ".join(
        f"{count} = s.{count} {sign} c.{share}"
        for count, share in (
            ("live_entries", "live"),
            ("left_entries", "gone"),
            ("expiring_entries", "expiring"),
        )
    )
    where = (
        "s.account_id = c.account_id AND s.layer = c.layer "
        "AND (c.live, c.gone, c.expiring) <> (0, 0, 0)"
    )
    return f"""
        WITH c AS (
            SELECT account_id, layer, member_id, {_shares(of)}
              FROM {rows} GROUP BY account_id, layer, member_id),
        shared AS (
            UPDATE business_memory_shelf s SET {changes} FROM c
             WHERE {where} AND s.member_id IS NULL AND c.member_id IS NULL)
        UPDATE business_memory_shelf s SET {changes} FROM c
         WHERE {where} AND s.member_id = c.member_id;"""  # noqa: S608  (constant text)


# An entry that changed: its old self leaves its counts, its new self joins them.
_MOVED = """(VALUES (OLD.account_id, OLD.layer, OLD.member_id, OLD.status, OLD.expires_at, -1),
                (NEW.account_id, NEW.layer, NEW.member_id, NEW.status, NEW.expires_at, 1))
         AS moved (account_id, layer, member_id, status, expires_at, n)"""

COUNT_TRIGGERS = f"""
CREATE FUNCTION business_memory_count_entries() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN{_add("added", "count(*)")}
    ELSIF TG_OP = 'DELETE' THEN{_add("removed", "count(*)", sign="-")}
    ELSE{_add(_MOVED, "sum(n)")}
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER entry_count_added AFTER INSERT ON business_memory_entry
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION business_memory_count_entries();

CREATE TRIGGER entry_count_removed AFTER DELETE ON business_memory_entry
    REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION business_memory_count_entries();

CREATE TRIGGER entry_count_moved
    AFTER UPDATE OF status, expires_at, account_id, layer, member_id ON business_memory_entry
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR (OLD.expires_at IS NULL) <> (NEW.expires_at IS NULL)
          OR OLD.account_id <> NEW.account_id
          OR OLD.layer <> NEW.layer
          OR OLD.member_id IS DISTINCT FROM NEW.member_id)
    EXECUTE FUNCTION business_memory_count_entries();
"""

DROP_COUNT_TRIGGERS = """
DROP TRIGGER entry_count_moved ON business_memory_entry;
DROP TRIGGER entry_count_removed ON business_memory_entry;
DROP TRIGGER entry_count_added ON business_memory_entry;
DROP FUNCTION business_memory_count_entries();
"""

# Every shelf's counts, from its entries (a layer with none counts zeros).
COUNT_SHELVES = f"""
UPDATE business_memory_shelf s
   SET live_entries = coalesce(c.live, 0),
       left_entries = coalesce(c.gone, 0),
       expiring_entries = coalesce(c.expiring, 0)
  FROM business_memory_shelf t
  LEFT JOIN (SELECT account_id, layer, coalesce(member_id, 0) AS owner, {_shares("count(*)")}
               FROM business_memory_entry GROUP BY 1, 2, 3) c
    ON c.account_id = t.account_id AND c.layer = t.layer
   AND c.owner = coalesce(t.member_id, 0)
 WHERE s.id = t.id
"""  # noqa: S608  (constant text)


class Migration(migrations.Migration):
    dependencies = [("business_memory", "0008_entry_expiring")]

    operations = [
        migrations.AddField(
            model_name="shelf",
            name="live_entries",
            field=models.IntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="shelf",
            name="left_entries",
            field=models.IntegerField(editable=False, null=True),
        ),
        migrations.AddField(
            model_name="shelf",
            name="expiring_entries",
            field=models.IntegerField(editable=False, null=True),
        ),
        migrations.RunSQL(COUNT_TRIGGERS, DROP_COUNT_TRIGGERS),
        migrations.RunSQL(COUNT_SHELVES, migrations.RunSQL.noop),
    ]
