"""Check stored notes, entries and kept versions with today's integrity check (SPEC 15)."""

from django.core.management.base import BaseCommand, CommandError

from prospect_memory.business.services.integrity import entries_rescan
from prospect_memory.notes.services.notes import notes_rescan


class Command(BaseCommand):
    help = (
        "Run the memory-integrity check over every note, business memory entry and kept "
        "version no person has reviewed: after upgrading to a Kit that checks stored text, "
        "or to new patterns. Flags are set or dropped to match; entries that changed are "
        "brought up to date in the knowledge index. Idempotent; scripts/run runs it."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, batch_size, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        notes = notes_rescan(batch_size=batch_size)
        entries = entries_rescan(batch_size=batch_size)
        self.stdout.write(
            f"Checked {notes[0]} notes ({notes[1]} changed) and {entries[0]} entries and "
            f"versions ({entries[1]} changed)."
        )
