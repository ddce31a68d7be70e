"""The backlog of entries waiting for a vector indexed by account, so a search counts its
own account's whatever other accounts wait for; the new index is built before the old one
goes, both concurrently, so writes go on meanwhile."""

from django.contrib.postgres.operations import AddIndexConcurrently, RemoveIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False  # CREATE and DROP INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [("business_memory", "0012_entry_ready_model")]

    operations = [
        AddIndexConcurrently(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("embedding_status", "ready"), _negated=True),
                fields=["account", "embedding_status"],
                name="entry_account_backlog",
            ),
        ),
        RemoveIndexConcurrently(model_name="entry", name="entry_embedding_backlog"),
    ]
