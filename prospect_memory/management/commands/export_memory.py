import os

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from outreach.models import Account, Member
from prospect_memory.lifecycle.export import export_lines


class Command(BaseCommand):
    help = (
        "Export an account's memories as NDJSON (SPEC 16): notes, active and archived, "
        "compactions, and business memory (the shared layer, with versions and evictions; "
        "one member's own layer with --member), decrypted, with a manifest of counts and a "
        "SHA-256 checksum. Events and embeddings are not included. Written to standard "
        "output unless --output names a file."
    )

    def add_arguments(self, parser):
        parser.add_argument("account", help="the account's slug")
        parser.add_argument(
            "--member", help="email of the member whose own business memory is included"
        )
        parser.add_argument("--output", help="the file to write (default: standard output)")

    def handle(self, *args, account, member, output, **options):
        found = account_by_slug(account)
        seat = member_by_email(found, member) if member else None
        if output:
            written = self.to_file(export_lines(found, member=seat), output)
            self.stderr.write(f"Exported {written} lines of account {found.slug} to {output}.")
        else:
            self.stream(export_lines(found, member=seat))

    def to_file(self, lines, output: str) -> int:
        """Into a new file; an export that fails on the way leaves no file behind."""
        try:
            target = open(output, "xb")  # noqa: SIM115
        except FileExistsError:
            raise CommandError(f"{output} exists; name a new file.") from None
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}") from None
        try:
            with target:
                return write(lines, target)
        except BaseException:
            os.remove(output)
            raise

    def stream(self, lines) -> None:
        """To standard output as bytes, or as text when it takes text only."""
        binary = getattr(self.stdout, "buffer", None)
        if binary is None:
            for line in lines:
                self.stdout.write(line.decode("utf-8"), ending="")
            return
        self.stdout.flush()
        write(lines, binary)
        binary.flush()


def write(lines, target) -> int:
    """Write ``lines`` to the binary ``target``; how many."""
    count = 0
    for line in lines:
        target.write(line)
        count += 1
    return count


def account_by_slug(slug: str) -> Account:
    found = Account.objects.filter(slug=slug).first()
    if found is None:
        raise CommandError(f"no account has the slug {slug!r}")
    return found


def member_by_email(account: Account, email: str) -> Member:
    seat = (
        Member.objects.filter(account=account)
        .filter(Q(user__email__iexact=email.strip()) | Q(user__username__iexact=email.strip()))
        .select_related("user")
        .first()
    )
    if seat is None:
        raise CommandError(f"{email} is not a member of account {account.slug}")
    return seat
