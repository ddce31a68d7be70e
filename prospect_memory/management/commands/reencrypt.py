from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core.crypto import DecryptionError
from prospect_memory.core.crypto.rotation import everything_reseal


class Command(BaseCommand):
    help = (
        "Re-encrypt every sealed value (note titles and bodies, business memory values and "
        "their versions) under the newest key, the first of PROSPECT_MEMORY_ENCRYPTION_KEYS. "
        "Older keys can be removed afterwards."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, batch_size, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            results = everything_reseal(batch_size=batch_size)
        except DecryptionError as exc:
            raise CommandError(
                f"a value could not be decrypted ({exc}); keep every key that was in use "
                "in PROSPECT_MEMORY_ENCRYPTION_KEYS until this command has finished"
            ) from None
        for result in results:
            self.stdout.write(
                f"Re-encrypted {result.changed} of {result.seen} {result.label} under the "
                f"newest key; {result.seen - result.changed} were already current."
            )
