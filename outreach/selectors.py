"""Reads of Kit's CRM that other apps join to. Every function filters by account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from outreach.models import Account, Member
from outreach.sql import run_one


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


# One round trip: recall runs on every agent step, so the relationship is read with a
# single statement of scalar subqueries, each filtered by the account.
_RELATIONSHIP_SQL = """
SELECT
  (SELECT coalesce(json_agg(json_build_object(
              'id', c.id, 'name', c.name, 'locale', c.locale, 'status', c.status)
            ORDER BY c.name, c.id), '[]'::json)
     FROM outreach_campaign c
    WHERE c.account_id = %(account)s
      AND EXISTS (SELECT 1 FROM outreach_prospect p
                   WHERE p.account_id = %(account)s AND p.campaign_id = c.id
                     AND p.company_domain = %(domain)s)),
  (SELECT count(*)
     FROM outreach_message m JOIN outreach_prospect p ON p.id = m.prospect_id
    WHERE m.account_id = %(account)s AND p.account_id = %(account)s
      AND p.company_domain = %(domain)s AND m.status = 'sent'),
  (SELECT json_build_object(
            'sentiment', r.sentiment, 'received_at', r.received_at,
            'campaign', json_build_object(
                'id', c.id, 'name', c.name, 'locale', c.locale, 'status', c.status))
     FROM outreach_reply r
     JOIN outreach_prospect p ON p.id = r.prospect_id
     JOIN outreach_campaign c ON c.id = p.campaign_id
    WHERE r.account_id = %(account)s AND p.account_id = %(account)s
      AND p.company_domain = %(domain)s
    ORDER BY r.received_at DESC, r.id DESC
    LIMIT 1),
  (SELECT coalesce(json_agg(json_build_object('kind', s.kind, 'value', s.value)
            ORDER BY s.kind, s.value), '[]'::json)
     FROM outreach_suppression s
    WHERE s.account_id = %(account)s
      AND ((s.kind = 'domain' AND (s.value = %(domain)s OR s.value LIKE %(subdomains)s))
           OR (s.kind = 'address' AND s.value = %(address)s)))
"""


def _ref(data: dict) -> CampaignRef:
    return CampaignRef(
        id=data["id"], name=data["name"], locale=data["locale"], status=data["status"]
    )


def relationship_query(*, account: Account, domain: str, address: str | None = None):
    """The relationship statement and its parameters, for callers that batch statements."""
    escaped = domain.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _RELATIONSHIP_SQL, {
        "account": account.pk,
        "domain": domain,
        "subdomains": f"%.{escaped}",
        "address": (address or "").lower(),
    }


def relationship_from_row(row) -> Relationship:
    campaigns, messages_sent, last, suppressions = row
    last_reply = (
        LastReply(
            sentiment=last["sentiment"],
            received_at=datetime.fromisoformat(last["received_at"]),
            campaign=_ref(last["campaign"]),
        )
        if last
        else None
    )
    return Relationship(
        campaigns=[_ref(c) for c in campaigns],
        messages_sent=messages_sent,
        last_reply=last_reply,
        suppression_matches=[
            SuppressionMatch(kind=s["kind"], value=s["value"]) for s in suppressions
        ],
    )


def relationship_for_domain(
    *, account: Account, domain: str, address: str | None = None
) -> Relationship:
    """The account's history with the company at ``domain`` (a registrable domain).

    A domain suppression entry for the company or any of its subdomains matches, since mail
    to any of them reaches the company. An address entry matches only ``address``: one
    person opting out does not stop the whole company.
    """
    sql, params = relationship_query(account=account, domain=domain, address=address)
    return relationship_from_row(run_one(sql, params)[0])


def memberships_for_user(user) -> list[Member]:
    """The seats a user holds, accounts included, in a stable order."""
    return list(
        Member.objects.filter(user=user).select_related("account").order_by("account__slug")
    )


def member_for_session(*, user, account_slug: str | None) -> Member | None:
    """The seat a signed-in user acts in: the chosen account, else their first one."""
    if account_slug:
        chosen = member_for_user(user=user, account_slug=account_slug)
        if chosen is not None:
            return chosen
    return (
        Member.objects.filter(user=user)
        .select_related("account", "user")
        .order_by("account__slug")
        .first()
    )


def member_for_user(*, user, account_slug: str) -> Member | None:
    """The user's seat in the account with ``account_slug``, or None if they have none."""
    return (
        Member.objects.filter(user=user, account__slug=account_slug)
        .select_related("account", "user")
        .first()
    )


def prospect_for_member(*, member: Member, prospect_id: int):
    """A prospect of the member's account, or None (another account's prospect included)."""
    from outreach.models import Prospect

    return (
        Prospect.objects.filter(account=member.account, pk=prospect_id)
        .select_related("campaign")
        .first()
    )


def prospects_for_account(*, account: Account):
    from outreach.models import Prospect

    return (
        Prospect.objects.filter(account=account)
        .select_related("campaign")
        .order_by("company_domain", "email")
    )


def account_knows_domain(*, account: Account, domain: str) -> bool:
    from outreach.models import Prospect

    return Prospect.objects.filter(account=account, company_domain=domain).exists()
