import django.utils.timezone
from django.db import migrations, models

# An entry's last write by a member or an agent: its own if consolidation did not write the
# current version, else the newest version someone else wrote (or its creation).
BACKFILL_WRITTEN_AT = """
UPDATE business_memory_entry e
   SET written_at = CASE
       WHEN e.written_by_label <> 'consolidation' THEN e.updated_at
       ELSE coalesce(
           (SELECT max(v.written_at) FROM business_memory_entryversion v
             WHERE v.entry_id = e.id AND v.written_by_label <> 'consolidation'),
           e.created_at)
       END
"""

# Entries whose current version undoes a merge were kept apart by a person.
BACKFILL_KEPT_APART = (
    "UPDATE business_memory_entry SET kept_apart = true WHERE strategy = 'unmerge'"
)


class Migration(migrations.Migration):
    dependencies = [
        ("business_memory", "0004_consolidation"),
    ]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="kept_apart",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="entry",
            name="written_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunSQL(BACKFILL_WRITTEN_AT, migrations.RunSQL.noop),
        migrations.RunSQL(BACKFILL_KEPT_APART, migrations.RunSQL.noop),
    ]
