from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core.crypto import DecryptionError
from prospect_memory.services.keys import notes_reencrypt


class Command(BaseCommand):
    help = (
        "Re-encrypt every note title and body under the newest key "
        "(the first of PROSPECT_MEMORY_ENCRYPTION_KEYS). Older keys can be removed afterwards."
    )

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=500)

    def handle(self, *args, batch_size, **options):
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        try:
            seen, changed = notes_reencrypt(batch_size=batch_size)
        except DecryptionError as exc:
            raise CommandError(
                f"a note could not be decrypted ({exc}); keep every key that was in use "
                "in PROSPECT_MEMORY_ENCRYPTION_KEYS until this command has finished"
            ) from None
        self.stdout.write(
            f"Re-encrypted {changed} of {seen} notes under the newest key; "
            f"{seen - changed} were already current."
        )
