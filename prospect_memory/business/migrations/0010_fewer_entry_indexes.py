"""Indexes that every write paid for and no query needs.

The single-column indexes of an entry's account (the layer indexes start with it), of an
entry's member and alias (now partial: only rows that have one, so an account entry
updates neither), of an event's account (its recent events start with it), and of a
version's account and entry (``entry_history`` and ``entry_version_unique`` start with
them). The partial indexes are made before the old ones go, so a member's cascade or an
alias lookup always has one.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


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
    ]
