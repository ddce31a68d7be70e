"""An event's account has no index of its own: each kind of event has one that starts
with the account (its recent events).

The foreign keys stay as they are: only their indexes are dropped (a brief exclusive
lock each, no scan).
"""

import django.db.models.deletion
from django.db import migrations, models


def _drop(name: str, table: str, column: str) -> migrations.RunSQL:
    """Drop the index Django made for a foreign key (its name as Django makes it)."""
    return migrations.RunSQL(
        f'DROP INDEX IF EXISTS "{name}"',
        f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")',
    )


class Migration(migrations.Migration):
    dependencies = [
        ("outreach", "0005_account_closed_at"),
        ("prospect_memory", "0012_erasures_and_retention_runs"),
    ]

    operations = [
        # Django would drop and re-add each foreign key (validating every row under a lock)
        # to drop its index; the database drops only the index.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="auditevent",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="usageevent",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.account",
                    ),
                ),
            ],
            database_operations=[
                _drop(
                    "prospect_memory_auditevent_account_id_07fb345c",
                    "prospect_memory_auditevent",
                    "account_id",
                ),
                _drop(
                    "prospect_memory_usageevent_account_id_8c665e20",
                    "prospect_memory_usageevent",
                    "account_id",
                ),
            ],
        ),
    ]
