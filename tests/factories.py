"""Small builders for test data, through the same services the product uses."""

from __future__ import annotations

import itertools
from datetime import datetime

from django.utils import timezone

from outreach import services as crm
from outreach.models import Account, Campaign, Member, Prospect
from prospect_memory.notes.payloads import overlap_data
from prospect_memory.notes.rules import utc_today
from prospect_memory.notes.services.notes import note_save

_seq = itertools.count(1)


def account(slug: str | None = None, **kwargs) -> Account:
    return crm.account_create(slug=slug or f"account-{next(_seq)}", **kwargs)


def member(account: Account, email: str | None = None, *, admin: bool = False) -> Member:
    return crm.member_create(
        account=account, email=email or f"user{next(_seq)}@example.com", is_module_admin=admin
    )


def campaign(account: Account, name: str | None = None, locale: str = "en") -> Campaign:
    return crm.campaign_create(
        account=account, name=name or f"campaign {next(_seq)}", locale=locale
    )


def prospect(campaign: Campaign, email: str, domain: str | None = None) -> Prospect:
    return crm.prospect_create(
        campaign=campaign, email=email, company_domain=domain or email.rpartition("@")[2]
    )


def sent(prospect: Prospect, n: int = 1) -> None:
    for i in range(n):
        crm.message_record(prospect=prospect, subject=f"hello {i}", sent_at=timezone.now())


def reply(prospect: Prospect, sentiment: str, at: datetime | None = None) -> None:
    crm.reply_record(prospect=prospect, sentiment=sentiment, received_at=at or timezone.now())


#: A confidential finding, to show that a page or list never shows a note's content.
SECRET = "Acme's board approved a confidential acquisition."


def save_note(
    actor, domain="acme.dev", body="Acme raised a Series B of 40M led by Example Ventures.", **kw
):
    kw.setdefault("title", "Funding")
    kw.setdefault("source_urls", ["https://acme.dev/news/series-b"])
    kw.setdefault("observed_at", utc_today().isoformat())
    return note_save(actor=actor, domain=domain, body=body, **kw)


def overlap_of(result) -> dict:
    """The overlap of a save as the answer shows it."""
    return overlap_data(result.overlap)
