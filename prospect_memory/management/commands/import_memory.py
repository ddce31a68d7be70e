from django.core.management.base import BaseCommand, CommandError

from prospect_memory.core.lifecycle.fields import ImportRefused
from prospect_memory.lifecycle.imports import import_lines
from prospect_memory.lifecycle.lines import read_lines
from prospect_memory.management.commands.export_memory import account_by_slug, member_by_email

#: What each record type is, in the words of the product.
NAMES = {
    "dossier": "dossiers",
    "note": "notes",
    "compaction": "compactions",
    "entry": "business memory entries",
    "entry_version": "entry versions",
}


class Command(BaseCommand):
    help = (
        "Import an export (manage.py export_memory, or GET /api/v1/export) into an account "
        "that holds no memories yet: every record or none. Texts are encrypted under this "
        "Kit's key; embeddings are made by the backfill. A file with a member's own "
        "business memory needs --member, the member of this account who receives it."
    )

    def add_arguments(self, parser):
        parser.add_argument("account", help="the slug of the account to import into")
        parser.add_argument("file", help="the export (NDJSON)")
        parser.add_argument("--member", help="email of the member who receives the own layer")

    def handle(self, *args, account, file, member, **options):
        found = account_by_slug(account)
        seat = member_by_email(found, member) if member else None
        try:
            with open(file, "rb") as source:
                counts = import_lines(read_lines(source), found, member=seat)
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from None
        except ImportRefused as refusal:
            raise CommandError(refusal.message) from None
        listed = ", ".join(f"{count} {NAMES[kind]}" for kind, count in counts.items())
        self.stdout.write(f"Imported into account {found.slug}: {listed}.")
