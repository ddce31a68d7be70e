"""Demo data that shows every case: each reply sentiment, both suppression kinds, five locales."""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from outreach import scopes
from outreach.models import Account, Member
from outreach.oauth import configured_origin
from outreach.services import (
    access_token_issue,
    account_create,
    campaign_create,
    member_create,
    message_record,
    prospect_create,
    reply_record,
    suppression_add,
)

DEMO_SLUG = "demo"
DEMO_PASSWORD = "kit-demo-password"  # noqa: S105  (a local demo sign-in, printed on purpose)

CAMPAIGNS = [
    ("SaaS founders Q1", "en"),
    ("DACH Mittelstand", "de"),
    ("Scale-ups France", "fr"),
    ("Fintech LatAm", "es"),
    ("E-commerce Polska", "pl"),
]

# (email, company domain, campaign index, messages sent, reply sentiment or None)
PROSPECTS = [
    ("founder@acme.dev", "acme.dev", 0, 2, "positive"),
    ("cto@acme.dev", "acme.dev", 1, 1, None),
    ("ops@globex.io", "globex.io", 0, 1, "neutral"),
    ("ceo@initech.com", "initech.com", 0, 2, "negative"),
    ("info@umbrella.co.uk", "umbrella.co.uk", 0, 1, "bounce"),
    ("leitung@hooli.de", "hooli.de", 1, 1, "out_of_office"),
    ("contact@piedpiper.fr", "piedpiper.fr", 2, 1, "unsubscribe"),
    ("ventas@vandelay.es", "vandelay.es", 3, 0, None),
    ("biuro@soylent.pl", "soylent.pl", 4, 1, None),
]

SUPPRESSIONS = [
    ("address", "contact@piedpiper.fr", "Unsubscribed by reply"),
    ("domain", "vandelay.es", "Customer asked us never to contact the company"),
]


class Command(BaseCommand):
    help = (
        "Create the demo account, members and CRM data (safe to run again). The demo users, "
        "a superuser among them, share a published password, so this runs only with DEBUG "
        "on, or with --allow-insecure-demo."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--allow-insecure-demo",
            action="store_true",
            help="seed even though DEBUG is off (never on a server others can reach)",
        )

    def handle(self, *args, allow_insecure_demo=False, **options):
        if not (settings.DEBUG or allow_insecure_demo):
            raise CommandError(
                "seed_demo creates a superuser and members with the published password "
                f"{DEMO_PASSWORD!r}, so it runs only with DEBUG=true (scripts/run sets it). "
                "On a machine no one else can reach, pass --allow-insecure-demo to seed anyway."
            )
        if Account.objects.filter(slug=DEMO_SLUG).exists():
            self.stdout.write("Demo data is already present.")
        else:
            self._seed()
        owner = Member.objects.select_related("user", "account").get(
            account__slug=DEMO_SLUG, user__username="demo@kit.test"
        )
        base = configured_origin()
        token = access_token_issue(
            member=owner,
            scopes=list(scopes.ALL),
            client_name="Claude Code",
            expires_days=30,
            base_url=base,
        )
        self.stdout.write("Connect Claude Code to the demo account (token valid 30 days):")
        header = f'"Authorization: Bearer {token}"'
        self.stdout.write(f"  claude mcp add --transport http kit {base}/mcp --header {header}")
        self.stdout.write(
            f"Sign in at {base}/ as demo@kit.test "
            f"(password {DEMO_PASSWORD}); staff admin at /admin/ as admin@kit.test "
            "with the same password."
        )

    @transaction.atomic
    def _seed(self) -> None:
        User = get_user_model()
        now = timezone.now()
        demo = account_create(slug=DEMO_SLUG, name="Demo Outreach Co")
        other = account_create(slug="northwind", name="Northwind Traders")

        owner = member_create(account=demo, email="demo@kit.test", is_module_admin=True)
        member_create(account=other, email="demo@kit.test", is_module_admin=False)
        reader = member_create(account=demo, email="reader@kit.test", is_module_admin=False)
        for user in (owner.user, reader.user):
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        staff, _ = User.objects.get_or_create(
            username="admin@kit.test",
            defaults={"email": "admin@kit.test", "is_staff": True, "is_superuser": True},
        )
        staff.set_password(DEMO_PASSWORD)
        staff.save()

        campaigns = [
            campaign_create(account=demo, name=name, locale=locale) for name, locale in CAMPAIGNS
        ]
        for index, (email, domain, campaign_index, sent, sentiment) in enumerate(PROSPECTS):
            prospect = prospect_create(
                campaign=campaigns[campaign_index], email=email, company_domain=domain
            )
            for n in range(sent):
                message_record(
                    prospect=prospect,
                    subject=f"Intro {n + 1}",
                    sent_at=now - timedelta(days=20 - n * 3, hours=index),
                )
            if sentiment:
                reply_record(
                    prospect=prospect,
                    sentiment=sentiment,
                    received_at=now - timedelta(days=5, hours=index),
                )
        message_record(prospect=prospect, subject="Draft follow-up")
        for kind, value, reason in SUPPRESSIONS:
            suppression_add(account=demo, kind=kind, value=value, reason=reason)

        # The other account has a prospect at the same company, to show tenancy.
        other_campaign = campaign_create(account=other, name="Northwind pilots")
        other_prospect = prospect_create(
            campaign=other_campaign, email="buyer@acme.dev", company_domain="acme.dev"
        )
        reply_record(prospect=other_prospect, sentiment="negative", received_at=now)

        members = Member.objects.filter(account=demo).count()
        self.stdout.write(
            f"Created account {demo.slug} with {members} members, {len(campaigns)} campaigns, "
            f"{len(PROSPECTS)} prospects, replies of every sentiment and "
            f"{len(SUPPRESSIONS)} suppressions; and account {other.slug} for the account switcher."
        )
