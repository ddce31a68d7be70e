"""An event's account has no index of its own: each kind of event has one that starts
with the account (its recent events)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("outreach", "0005_account_closed_at"),
        ("prospect_memory", "0012_erasures_and_retention_runs"),
    ]

    operations = [
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
    ]
