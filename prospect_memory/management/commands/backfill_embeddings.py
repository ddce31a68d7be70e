from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core import pipeline
from prospect_memory.core.embeddings import EmbeddingError


class Command(BaseCommand):
    help = (
        "Embed rows whose embedding is pending or from another model: notes and business "
        "memory entries. Celery beat runs this every five minutes; without a broker, run it "
        "from cron."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=1000, help="rows per kind, at most")

    def handle(self, *args, limit, **options):
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        for target in pipeline.targets():
            try:
                stored = pipeline.backfill(target, limit=limit)
            except EmbeddingError as exc:
                raise CommandError(
                    f"the embedding provider failed: {exc}; try again later"
                ) from None
            kind = str(target.model._meta.verbose_name_plural).capitalize()
            self.stdout.write(f"{kind}: {stored} embedded.")
