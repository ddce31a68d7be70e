from django.core.management.base import BaseCommand, CommandError

from outreach.models import Account
from outreach.services import OutreachInputError, member_create


class Command(BaseCommand):
    help = "Give a user (created if new) a seat in an account."

    def add_arguments(self, parser):
        parser.add_argument("account_slug")
        parser.add_argument("email")
        parser.add_argument(
            "--module-admin",
            action="store_true",
            help="make the member an Outreach module admin (may save, compact and delete)",
        )

    def handle(self, *args, account_slug, email, module_admin, **options):
        account = Account.objects.filter(slug=account_slug).first()
        if account is None:
            raise CommandError(
                f"no account with slug {account_slug!r}; create it with "
                f"`python manage.py create_account {account_slug}`"
            )
        try:
            member = member_create(account=account, email=email, is_module_admin=module_admin)
        except OutreachInputError as exc:
            raise CommandError(str(exc)) from None
        role = "Outreach module admin" if member.is_module_admin else "member"
        self.stdout.write(f"Added {member.user.email} to {account.slug} as {role}.")
        if not member.user.has_usable_password():
            self.stdout.write(
                "Set a password for signing in with "
                f"`python manage.py changepassword {member.user.username}`."
            )
