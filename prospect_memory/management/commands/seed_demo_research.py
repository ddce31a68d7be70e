"""Demo research for the demo account (run after ``seed_demo``; safe to run again)."""

import random
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from oauth2_provider.models import get_application_model

from outreach.access import Actor
from outreach.models import Member
from prospect_memory.notes.models import Note, UsageEvent
from prospect_memory.notes.rules import utc_today
from prospect_memory.notes.services.notes import note_save

# (domain, days ago, title, body, sources)
NOTES = [
    (
        "acme.dev",
        2,
        "Series B: 40M led by Example Ventures",
        "Acme raised a **40M Series B** led by Example Ventures in November. Existing "
        "investors joined. The founder says the money goes to the data platform team and a "
        "sales office in Paris.",
        ["https://acme.dev/blog/series-b", "https://news.example/acme-series-b"],
    ),
    (
        "acme.dev",
        6,
        "Hiring 12 data engineers in Berlin",
        "The careers page lists **12 open roles** for the data platform, all in Berlin or "
        "remote within the EU. Hiring manager: the VP Engineering.",
        ["https://acme.dev/careers"],
    ),
    (
        "acme.dev",
        12,
        "Stack: Django, PostgreSQL, AWS",
        "Engineering blog posts and job ads name Django, PostgreSQL with pgvector, Celery "
        "and AWS (eu-central-1).",
        ["https://acme.dev/engineering/stack", "https://acme.dev/careers"],
    ),
    (
        "acme.dev",
        41,
        "New VP Sales from a competitor",
        "Acme hired a VP Sales who ran EMEA sales at a direct competitor. Announced on the "
        "company blog.",
        ["https://acme.dev/blog/new-vp-sales"],
    ),
    (
        "initech.com",
        20,
        "Replied negatively to the spring campaign",
        "The CEO asked not to be contacted again this year. Keep the note for context.",
        ["https://initech.com/about"],
    ),
] + [
    (
        "globex.io",
        n + 1,
        f"Globex finding {n + 1}",
        f"Globex fact number {n + 1}: a separate detail found on its site, page {n + 1}.",
        [f"https://globex.io/page/{n + 1}"],
    )
    for n in range(9)
]


class Command(BaseCommand):
    help = "Save demo research notes for the demo account through the real save service."

    def handle(self, *args, **options):
        owner = (
            Member.objects.filter(account__slug="demo", user__username="demo@kit.test")
            .select_related("account", "user")
            .first()
        )
        if owner is None:
            raise CommandError("run `python manage.py seed_demo` first")
        if Note.objects.filter(account=owner.account).exists():
            self.stdout.write("Demo research is already present.")
            return
        actor = Actor.for_member(owner)
        today = utc_today()
        for domain, days, title, body, sources in NOTES:
            note_save(
                actor=actor,
                domain=domain,
                title=title,
                body=body,
                source_urls=sources,
                observed_at=(today - timedelta(days=days)).isoformat(),
            )
        self._demo_activity(owner)
        self.stdout.write(
            f"Saved {len(NOTES)} demo notes: acme.dev (4, one stale), initech.com (stop: "
            "negative reply), globex.io (9, compaction suggested); and 30 days of simulated "
            "agent activity for the memory-health page."
        )

    def _demo_activity(self, owner) -> None:
        """Recalls and saves of two demo agents over 30 days, so memory health has a story."""
        Application = get_application_model()
        clients = [
            Application.objects.get_or_create(
                name=name,
                user=None,
                defaults={
                    "client_type": Application.CLIENT_PUBLIC,
                    "authorization_grant_type": Application.GRANT_AUTHORIZATION_CODE,
                },
            )[0]
            for name in ("Claude Code (demo)", "Claude Cowork (demo)")
        ]
        rng = random.Random(30)  # noqa: S311  (demo data, not security)
        now = timezone.now()
        domains = ["acme.dev", "globex.io", "initech.com", "hooli.de", "soylent.pl"]
        events = []
        for days_ago in range(29, -1, -1):
            # Memory fills up over the month, so more recalls find a fresh dossier.
            reuse = 0.2 + 0.6 * (29 - days_ago) / 29
            for _ in range(rng.randint(3, 12)):
                at = now - timedelta(days=days_ago, minutes=rng.randint(0, 600))
                client = rng.choice(clients)
                domain = rng.choice(domains)
                from_memory = rng.random() < reuse
                events.append(
                    UsageEvent(
                        account=owner.account,
                        kind=UsageEvent.Kind.RECALL,
                        subject=domain,
                        oauth_application=client,
                        from_memory=from_memory,
                        created_at=at,
                    )
                )
                if not from_memory:
                    events.append(
                        UsageEvent(
                            account=owner.account,
                            kind=UsageEvent.Kind.SAVE,
                            subject=domain,
                            oauth_application=client,
                            near_duplicate=rng.random() < 0.12,
                            shared_source=rng.random() < 0.25,
                            created_at=at,
                        )
                    )
        UsageEvent.objects.bulk_create(events)
