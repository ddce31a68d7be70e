from django.core.management.base import BaseCommand

from prospect_memory.core.crypto import generate_key


class Command(BaseCommand):
    help = (
        "Print a new encryption key. To rotate, put it first in "
        "PROSPECT_MEMORY_ENCRYPTION_KEYS, keep the old ones after it, then run reencrypt_notes."
    )

    def handle(self, *args, **options):
        self.stdout.write(generate_key())
