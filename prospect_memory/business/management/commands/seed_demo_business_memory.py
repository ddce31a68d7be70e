"""The demo account's business memory, stored through the real service."""

from django.core.management.base import BaseCommand, CommandError

from outreach.access import Actor
from outreach.models import Member
from prospect_memory.business.models import Entry
from prospect_memory.business.services.store import entry_store

# (key, value, category, confidence, source)
BASELINE = [
    (
        "icp_definition",
        {
            "industry": ["SaaS", "DevTools"],
            "headcount": "11-200",
            "geography": ["US", "EU"],
            "signals": ["hiring account executives", "raised a Series A or B in the last year"],
            "disqualifiers": ["agencies", "crypto", "fewer than 10 employees"],
        },
        "fact",
        90,
        {"pipeline_id": "icp_builder", "execution_id": "run_0192", "step_id": "step_3"},
    ),
    (
        "deal_score_rubric",
        {
            "criteria": ["fit", "timing", "budget", "champion"],
            "weights": [0.4, 0.2, 0.2, 0.2],
            "calibration": "A score of 0.7 or more has meant a first call in 3 of 5 cases.",
        },
        "fact",
        95,
        None,
    ),
    (
        "brand_voice",
        {
            "tone": "plain, specific, warm; one idea per message",
            "length": "under 120 words for a first message",
            "banned_phrases": [
                "I hope this email finds you well",
                "just circling back",
                "synergy",
                "game-changer",
                "touch base",
            ],
            "sign_off": "first name only",
        },
        "preference",
        90,
        None,
    ),
    (
        "product_catalog",
        {
            "plans": [
                {"name": "Starter", "price_eur_month": 49, "seats": 3},
                {"name": "Team", "price_eur_month": 199, "seats": 15},
                {"name": "Enterprise", "price": "on request", "seats": "unlimited"},
            ],
            "differentiators": [
                "research memory shared by every agent",
                "writing guides in five languages",
            ],
        },
        "fact",
        85,
        None,
    ),
    (
        "pattern:ae_hiring_replies",
        {
            "observation": "Companies hiring account executives replied about twice as often",
            "reply_rate": {"hiring": 0.14, "not_hiring": 0.07},
            "sample": 41,
        },
        "insight",
        72,
        {
            "pipeline_id": "weekly_outreach",
            "execution_id": "run_2026_47",
            "step_id": "analyse_replies",
            "extracted_at": "2026-11-23T09:00:00Z",
        },
    ),
    (
        "pattern:dach_subject_lines",
        {
            "observation": "German subject lines under 40 characters were opened more",
            "open_rate": {"short": 0.52, "long": 0.38},
            "sample": 120,
        },
        "outcome",
        64,
        {
            "pipeline_id": "weekly_outreach",
            "execution_id": "run_2026_46",
            "step_id": "analyse_opens",
            "extracted_at": "2026-11-16T09:00:00Z",
        },
    ),
]

OWN_CONTEXT = [
    ("signature", "Best,\nDana from Demo Outreach Co", "preference", 90),
    ("territory", {"regions": ["DACH", "Benelux"], "languages": ["de", "en"]}, "fact", 80),
]


class Command(BaseCommand):
    help = (
        "Give the demo account a business memory baseline (ICP, scoring rubric, brand voice "
        "with banned phrases, catalog, two learned patterns) and the demo member's own "
        "context, through the real service. Safe to run again."
    )

    def handle(self, *args, **options):
        owner = (
            Member.objects.select_related("user", "account")
            .filter(account__slug="demo", user__username="demo@kit.test")
            .first()
        )
        if owner is None:
            raise CommandError("run `python manage.py seed_demo` first")
        if Entry.objects.filter(account=owner.account).exists():
            self.stdout.write("The demo business memory is already present.")
            return
        actor = Actor.for_member(owner)
        for key, value, category, confidence, source in BASELINE:
            entry_store(
                actor=actor,
                key=key,
                value=value,
                category=category,
                confidence=confidence,
                source=source,
            )
        for key, value, category, confidence in OWN_CONTEXT:
            entry_store(
                actor=actor,
                key=key,
                value=value,
                layer="member",
                category=category,
                confidence=confidence,
            )
        self.stdout.write(
            f"Stored {len(BASELINE)} account entries and {len(OWN_CONTEXT)} of "
            f"{owner.user.get_username()}'s own in the demo business memory."
        )
