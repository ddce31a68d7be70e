from django.core.management.base import BaseCommand, CommandError

from outreach.models import Account
from outreach.services import OutreachInputError, account_create


class Command(BaseCommand):
    help = "Create a Kit account."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="URL-safe identifier, e.g. acme-sales")
        parser.add_argument("--name", default="", help="display name (defaults to the slug)")
        parser.add_argument(
            "--no-outreach-addon",
            action="store_true",
            help="create the account without the Outreach add-on",
        )
        parser.add_argument(
            "--subscription",
            default=Account.Subscription.ACTIVE,
            choices=Account.Subscription.values,
            help="subscription status (default: active)",
        )

    def handle(self, *args, slug, name, no_outreach_addon, subscription, **options):
        try:
            account = account_create(
                slug=slug,
                name=name,
                outreach_addon=not no_outreach_addon,
                subscription_status=subscription,
            )
        except OutreachInputError as exc:
            raise CommandError(str(exc)) from None
        addon = "with" if account.outreach_addon else "without"
        self.stdout.write(
            f"Created account {account.slug} ({account.name}), {addon} the Outreach add-on, "
            f"subscription {account.subscription_status}."
        )
