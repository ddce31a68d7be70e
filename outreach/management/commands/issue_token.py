from django.core.management.base import BaseCommand, CommandError

from outreach import scopes
from outreach.models import Account, Member
from outreach.oauth import configured_origin, kit_resources
from outreach.services import OutreachInputError, access_token_issue


class Command(BaseCommand):
    help = (
        "Issue an OAuth bearer token for a member, for MCP or API clients that take a header "
        "(e.g. `claude mcp add --header`). Prints the token alone on stdout, and on stderr the "
        "resources it is for."
    )

    def add_arguments(self, parser):
        parser.add_argument("account_slug")
        parser.add_argument("email")
        parser.add_argument(
            "--scope",
            action="append",
            choices=scopes.ALL,
            help="repeat for several; default: both",
        )
        parser.add_argument("--client", default="Claude Code", help="the OAuth client's name")
        parser.add_argument("--expires-days", type=int, default=30)
        parser.add_argument(
            "--base-url",
            default="",
            help="Kit's public origin the token is for (default KIT_PUBLIC_URL, else "
            "http://KIT_ADDRESS: the origin the server names)",
        )

    def handle(self, *args, account_slug, email, scope, client, expires_days, base_url, **opts):
        account = Account.objects.filter(slug=account_slug).first()
        if account is None:
            raise CommandError(f"no account with slug {account_slug!r}")
        member = (
            Member.objects.select_related("user", "account")
            .filter(account=account, user__username=email.strip().lower())
            .first()
        )
        if member is None:
            raise CommandError(
                f"{email} is not a member of {account_slug}; add them with "
                f"`python manage.py create_member {account_slug} {email}`"
            )
        origin = (base_url or configured_origin()).rstrip("/")
        try:
            token = access_token_issue(
                member=member,
                scopes=scope or list(scopes.ALL),
                client_name=client,
                expires_days=expires_days,
                base_url=origin,
            )
        except OutreachInputError as exc:
            raise CommandError(str(exc)) from None
        resources = " and ".join(sorted(kit_resources(origin)))
        self.stderr.write(
            f"A token for {member.user.username} in {account.slug}, for {resources}, "
            f"valid {expires_days} days:"
        )
        self.stdout.write(token)
