"""Reads of Kit's CRM that other apps join to. Every function filters by account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from outreach.models import Account, Campaign, Member, Message, Reply, Suppression


@dataclass(frozen=True)
class CampaignRef:
    id: int
    name: str
    locale: str
    status: str


@dataclass(frozen=True)
class LastReply:
    sentiment: str
    received_at: datetime
    campaign: CampaignRef


@dataclass(frozen=True)
class SuppressionMatch:
    kind: str
    value: str


@dataclass(frozen=True)
class Relationship:
    """What the account has already done with a company, and whether it must stop."""

    campaigns: list[CampaignRef]
    messages_sent: int
    last_reply: LastReply | None
    suppression_matches: list[SuppressionMatch]

    @property
    def suppressed(self) -> bool:
        return bool(self.suppression_matches)


def _campaign_ref(campaign: Campaign) -> CampaignRef:
    return CampaignRef(
        id=campaign.pk, name=campaign.name, locale=campaign.locale, status=campaign.status
    )


def suppression_matches(
    *, account: Account, domain: str, address: str | None = None
) -> list[SuppressionMatch]:
    """Suppression entries that cover ``domain`` (or a subdomain of it) or ``address``.

    A domain entry for the company or any of its subdomains matches, since mail to any of
    them reaches the company. An address entry matches only the address asked about: one
    person opting out does not stop the whole company.
    """
    condition = Q(kind=Suppression.Kind.DOMAIN) & (
        Q(value=domain) | Q(value__endswith=f".{domain}")
    )
    if address:
        condition |= Q(kind=Suppression.Kind.ADDRESS, value=address.lower())
    rows = Suppression.objects.filter(condition, account=account).order_by("kind", "value")
    return [
        SuppressionMatch(kind=kind, value=value)
        for kind, value in rows.values_list("kind", "value")
    ]


def relationship_for_domain(
    *, account: Account, domain: str, address: str | None = None
) -> Relationship:
    """The account's history with the company at ``domain`` (a registrable domain)."""
    campaigns = (
        Campaign.objects.filter(
            account=account, prospects__account=account, prospects__company_domain=domain
        )
        .distinct()
        .order_by("name")
    )
    messages_sent = Message.objects.filter(
        account=account, prospect__company_domain=domain, status=Message.Status.SENT
    ).count()
    last = (
        Reply.objects.filter(account=account, prospect__company_domain=domain)
        .select_related("prospect__campaign")
        .order_by("-received_at", "-pk")
        .first()
    )
    last_reply = (
        LastReply(
            sentiment=last.sentiment,
            received_at=last.received_at,
            campaign=_campaign_ref(last.prospect.campaign),
        )
        if last
        else None
    )
    return Relationship(
        campaigns=[_campaign_ref(c) for c in campaigns],
        messages_sent=messages_sent,
        last_reply=last_reply,
        suppression_matches=suppression_matches(account=account, domain=domain, address=address),
    )


def memberships_for_user(user) -> list[Member]:
    """The seats a user holds, accounts included, in a stable order."""
    return list(
        Member.objects.filter(user=user).select_related("account").order_by("account__slug")
    )


def member_for_user(*, user, account_slug: str) -> Member | None:
    """The user's seat in the account with ``account_slug``, or None if they have none."""
    return (
        Member.objects.filter(user=user, account__slug=account_slug)
        .select_related("account", "user")
        .first()
    )
