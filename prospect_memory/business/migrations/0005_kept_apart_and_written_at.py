import django.db.models.functions.datetime
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

# Entries a person separated from another: the current version undoes a merge, or the job
# demoted it since and the last version someone else wrote does. (An entry already merged
# again is left as it is: the operations guide says how to find it.)
BACKFILL_KEPT_APART = """
UPDATE business_memory_entry e
   SET kept_apart = true
 WHERE e.status <> 'merged'
   AND (e.strategy = 'unmerge'
        OR (e.written_by_label = 'consolidation'
            AND (SELECT v.strategy FROM business_memory_entryversion v
                  WHERE v.entry_id = e.id AND v.written_by_label <> 'consolidation'
                  ORDER BY v.version DESC LIMIT 1) = 'unmerge'))
"""


class Migration(migrations.Migration):
    dependencies = [
        ("business_memory", "0004_consolidation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="entry",
            name="used_at",
            field=models.DateTimeField(
                db_default=django.db.models.functions.datetime.Now(),
                default=django.utils.timezone.now,
            ),
        ),
        migrations.AlterField(
            model_name="entry",
            name="idle_periods_charged",
            field=models.PositiveSmallIntegerField(db_default=0, default=0),
        ),
        migrations.AddField(
            model_name="entry",
            name="kept_apart",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="entry",
            name="written_at",
            field=models.DateTimeField(
                db_default=django.db.models.functions.datetime.Now(),
                default=django.utils.timezone.now,
            ),
        ),
        migrations.RunSQL(BACKFILL_WRITTEN_AT, migrations.RunSQL.noop),
        migrations.RunSQL(BACKFILL_KEPT_APART, migrations.RunSQL.noop),
    ]
