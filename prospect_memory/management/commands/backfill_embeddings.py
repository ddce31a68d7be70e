from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core import pipeline
from prospect_memory.core.embeddings import EmbeddingError
from prospect_memory.note_embeddings import NOTES


class Command(BaseCommand):
    help = (
        "Embed notes whose embedding is pending or from another model. Celery beat runs "
        "this every five minutes; without a broker, run it from cron."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=1000)

    def handle(self, *args, limit, **options):
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        try:
            stored = pipeline.backfill(NOTES, limit=limit)
        except EmbeddingError as exc:
            raise CommandError(f"the embedding provider failed: {exc}; try again later") from None
        self.stdout.write(f"Embedded {stored} note(s).")
