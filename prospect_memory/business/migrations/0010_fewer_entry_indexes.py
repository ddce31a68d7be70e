"""Indexes that every write paid for and no query needs.

The single-column indexes of an entry's account (the layer indexes start with it), of an
entry's member and alias (now partial: only rows that have one, so an account entry
updates neither), of an event's account (its recent events start with it), and of a
version's account and entry (``entry_history`` and ``entry_version_unique`` start with
them).

The foreign keys stay as they are: only their indexes are dropped (a brief exclusive lock
each, no scan); the two partial indexes are built like any new index (the entries
table's writes wait while they are; docs/operations.md).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def _drop(name: str, table: str, column: str) -> migrations.RunSQL:
    """Drop the index Django made for a foreign key (its name as Django makes it)."""
    return migrations.RunSQL(
        f'DROP INDEX IF EXISTS "{name}"',
        f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}")',
    )


class Migration(migrations.Migration):
    dependencies = [
        ("business_memory", "0009_shelf_counts"),
        ("outreach", "0005_account_closed_at"),
        migrations.swappable_dependency(settings.OAUTH2_PROVIDER_APPLICATION_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("member__isnull", False)),
                fields=["member"],
                name="entry_member",
            ),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("alias_of__isnull", False)),
                fields=["alias_of"],
                name="entry_alias",
            ),
        ),
        # Django would drop and re-add each foreign key (validating every row under a lock)
        # to drop its index; the database drops only the index.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="entry",
                    name="alias_of",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="aliases",
                        to="business_memory.entry",
                    ),
                ),
                migrations.AlterField(
                    model_name="entry",
                    name="member",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.member",
                    ),
                ),
                migrations.AlterField(
                    model_name="entryevent",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="entryversion",
                    name="account",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="outreach.account",
                    ),
                ),
                migrations.AlterField(
                    model_name="entryversion",
                    name="entry",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="business_memory.entry",
                    ),
                ),
            ],
            database_operations=[
                _drop(
                    "business_memory_entry_account_id_1469b97c",
                    "business_memory_entry",
                    "account_id",
                ),
                _drop(
                    "business_memory_entry_alias_of_id_ccb2d9f3",
                    "business_memory_entry",
                    "alias_of_id",
                ),
                _drop(
                    "business_memory_entry_member_id_a1c388d3", "business_memory_entry", "member_id"
                ),
                _drop(
                    "business_memory_entryevent_account_id_0fb33b74",
                    "business_memory_entryevent",
                    "account_id",
                ),
                _drop(
                    "business_memory_entryversion_account_id_cc5ef41a",
                    "business_memory_entryversion",
                    "account_id",
                ),
                _drop(
                    "business_memory_entryversion_entry_id_f8945e2d",
                    "business_memory_entryversion",
                    "entry_id",
                ),
            ],
        ),
    ]
