from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from outreach import scopes
from outreach.access import Actor
from outreach.errors import KitError
from outreach.models import Account, Member
from outreach.operations import execute
from prospect_memory.lifecycle.operations import ERASE_COMPANY


class Command(BaseCommand):
    help = (
        "Erase everything an account knows about a company (SPEC 16): its notes, archived "
        "notes, compactions, vectors and the events that name the domain. Audited (who, "
        "when, counts); cannot be undone."
    )

    def add_arguments(self, parser):
        parser.add_argument("account", help="The account's slug.")
        parser.add_argument("domain", help="The company: a domain, website URL or email.")
        parser.add_argument("--confirm", required=True, help="The domain typed again, to confirm.")
        parser.add_argument(
            "--by",
            required=True,
            help="Who asks: a module admin of the account or a staff user (username).",
        )

    def handle(self, *args, account, domain, confirm, by, **options):
        found = Account.objects.filter(slug=account).first()
        if found is None:
            raise CommandError(f"no account {account!r}")
        actor = self._actor(found, by)
        try:
            data = execute(
                ERASE_COMPANY,
                actor=actor,
                granted=scopes.ALL,
                arguments={"domain": domain, "confirm": confirm},
            )
        except KitError as error:
            raise CommandError(error.message) from None
        erased = data["erased"]
        counts = ", ".join(
            f"{count} {kind.replace('_', ' ')}" for kind, count in erased["counts"].items()
        )
        self.stdout.write(f"Erased {erased['domain']} from {found.slug}: {counts}.")

    @staticmethod
    def _actor(account: Account, username: str) -> Actor:
        member = (
            Member.objects.select_related("user", "account")
            .filter(account=account, user__username=username)
            .first()
        )
        if member is not None:
            return Actor.for_member(member)
        user = get_user_model().objects.filter(username=username, is_staff=True).first()
        if user is None:
            raise CommandError(
                f"{username!r} is neither a member of {account.slug} nor a staff user"
            )
        return Actor(account=account, staff_user=user)
