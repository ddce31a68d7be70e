"""Ready entries by model, so a search counts the entries it could not compare without
reading the others; built concurrently, so writes go on meanwhile."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [("business_memory", "0011_alter_evictedentry_options")]

    operations = [
        AddIndexConcurrently(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("embedding_status", "ready")),
                fields=["account", "embedding_model"],
                name="entry_ready_model",
            ),
        ),
    ]
