from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core import embedding_pipeline
from prospect_memory.core.embeddings import EmbeddingError, get_provider


class Command(BaseCommand):
    help = (
        "Embed rows whose embedding is pending or from another model: notes and business "
        "memory entries. Celery beat runs this every five minutes; without a broker, run it "
        "from cron."
    )

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=1000, help="rows per kind, at most")
        parser.add_argument(
            "--all",
            action="store_true",
            help="go on, a batch of --limit at a time, until nothing waits (each batch is "
            "kept as it is done: stopped, the command goes on where it stopped)",
        )

    def handle(self, *args, limit, all=False, **options):
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        model = get_provider().model
        for target in embedding_pipeline.targets():
            kind = str(target.model._meta.verbose_name_plural).capitalize()
            stored = 0
            while True:
                try:
                    done = embedding_pipeline.backfill(target, limit=limit)
                except EmbeddingError as exc:
                    raise CommandError(
                        f"the embedding provider failed: {exc}; try again later"
                    ) from None
                stored += done
                left = embedding_pipeline.waiting(target)
                if not all or not done or not left:
                    break
                self.stdout.write(f"{kind}: {stored} embedded by {model}, {left} wait.")
            self.stdout.write(f"{kind}: {stored} embedded by {model}, {left} wait.")
