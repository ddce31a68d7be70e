"""The index of live entries with an expiry, which a write counts as already gone; built
concurrently, so writes go on meanwhile."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [("business_memory", "0007_integrity_reviewed")]

    operations = [
        AddIndexConcurrently(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("expires_at__isnull", False), ("status", "live")),
                fields=["account", "layer", "member", "expires_at"],
                name="entry_expiring",
            ),
        ),
    ]
