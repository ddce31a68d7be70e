"""Build the notes' nearest-neighbour index for the current embedding model."""

from django.core.management.base import BaseCommand

from prospect_memory.core.embeddings import get_provider
from prospect_memory.notes.index import build_index, drop_other_indexes, index_name


class Command(BaseCommand):
    help = (
        "Build the HNSW index that knowledge search uses for the current embedding model's "
        "notes (concurrently: writes go on), if it is missing or invalid; with --drop-others, "
        "drop the indexes of other models. Run it after changing the embedding model."
    )

    def add_arguments(self, parser):
        parser.add_argument("--drop-others", action="store_true", help="drop other models' indexes")

    def handle(self, *args, drop_others=False, **options):
        provider = get_provider()
        seconds = build_index(provider)
        self.stdout.write(
            f"{index_name(provider.model)} ({provider.model}): ready in {seconds:.1f} s"
        )
        if drop_others:
            for name in drop_other_indexes(provider):
                self.stdout.write(f"dropped {name}")
