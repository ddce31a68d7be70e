"""The notes' nearest-neighbour index (HNSW) for the configured embedding model, and the
index knowledge search counts uncompared notes with; both built concurrently, so writes go
on meanwhile (``prospect_memory.notes.index``)."""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


def build(apps, schema_editor):
    from prospect_memory.core.embeddings import get_provider
    from prospect_memory.notes.index import build_index

    build_index(get_provider())


class Migration(migrations.Migration):
    atomic = False  # CREATE INDEX CONCURRENTLY cannot run in a transaction

    dependencies = [("prospect_memory", "0008_remove_note_content_hash")]

    operations = [
        AddIndexConcurrently(
            model_name="note",
            index=models.Index(
                fields=["account", "status", "embedding_status", "embedding_model"],
                name="note_account_embedding",
            ),
        ),
        migrations.RunPython(build, migrations.RunPython.noop, elidable=True),
    ]
