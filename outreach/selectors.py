"""Reads of Kit's CRM that other apps join to. Every function filters by account."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import DEFAULT_DB_ALIAS

from outreach.models import (
    Account,
    Campaign,
    Member,
    Message,
    Prospect,
    Reply,
    Suppression,
)
from pgstatements import run_one


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
    #: The latest reply that asked to unsubscribe, whatever came after it (an opt-out stands).
    unsubscribe: LastReply | None = None

    @property
    def suppressed(self) -> bool:
        return bool(self.suppression_matches)


# One round trip: recall runs on every agent step, so the relationship is read with a
# single statement of scalar subqueries, each filtered by the account. Built once from the
# models' tables; statuses and kinds are parameters.
@cache
def _relationship_sql() -> str:
    campaign, prospect = Campaign._meta.db_table, Prospect._meta.db_table
    message, reply = Message._meta.db_table, Reply._meta.db_table
    suppression = Suppression._meta.db_table
    return f"""
SELECT
  (SELECT coalesce(json_agg(json_build_object(
              'id', c.id, 'name', c.name, 'locale', c.locale, 'status', c.status)
            ORDER BY c.name, c.id), '[]'::json)
     FROM {campaign} c
    WHERE c.account_id = %(account)s
      AND EXISTS (SELECT 1 FROM {prospect} p
                   WHERE p.account_id = %(account)s AND p.campaign_id = c.id
                     AND p.company_domain = %(domain)s)),
  (SELECT count(*)
     FROM {message} m JOIN {prospect} p ON p.id = m.prospect_id
    WHERE m.account_id = %(account)s AND p.account_id = %(account)s
      AND p.company_domain = %(domain)s AND m.status = %(sent)s),
  (SELECT json_build_object(
            'sentiment', r.sentiment, 'received_at', r.received_at,
            'campaign', json_build_object(
                'id', c.id, 'name', c.name, 'locale', c.locale, 'status', c.status))
     FROM {reply} r
     JOIN {prospect} p ON p.id = r.prospect_id
     JOIN {campaign} c ON c.id = p.campaign_id
    WHERE r.account_id = %(account)s AND p.account_id = %(account)s
      AND p.company_domain = %(domain)s
    ORDER BY r.received_at DESC, r.id DESC
    LIMIT 1),
  (SELECT json_build_object(
            'sentiment', r.sentiment, 'received_at', r.received_at,
            'campaign', json_build_object(
                'id', c.id, 'name', c.name, 'locale', c.locale, 'status', c.status))
     FROM {reply} r
     JOIN {prospect} p ON p.id = r.prospect_id
     JOIN {campaign} c ON c.id = p.campaign_id
    WHERE r.account_id = %(account)s AND p.account_id = %(account)s
      AND p.company_domain = %(domain)s AND r.sentiment = %(unsubscribe)s
    ORDER BY r.received_at DESC, r.id DESC
    LIMIT 1),
  (SELECT coalesce(json_agg(json_build_object('kind', s.kind, 'value', s.value)
            ORDER BY s.kind, s.value), '[]'::json)
     FROM {suppression} s
    WHERE s.account_id = %(account)s
      AND ((s.kind = %(domain_kind)s AND (s.value = %(domain)s OR s.value LIKE %(subdomains)s))
           OR (s.kind = %(address_kind)s AND s.value = %(address)s)))
"""  # noqa: S608  (names from the models, values are parameters)


def _ref(data: dict) -> CampaignRef:
    return CampaignRef(
        id=data["id"], name=data["name"], locale=data["locale"], status=data["status"]
    )


def relationship_query(*, account: Account, domain: str, address: str | None = None):
    """The relationship statement and its parameters, for callers that batch statements."""
    escaped = domain.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return _relationship_sql(), {
        "account": account.pk,
        "domain": domain,
        "subdomains": f"%.{escaped}",
        "address": (address or "").lower(),
        "sent": Message.Status.SENT,
        "domain_kind": Suppression.Kind.DOMAIN,
        "address_kind": Suppression.Kind.ADDRESS,
        "unsubscribe": Reply.Sentiment.UNSUBSCRIBE,
    }


def _reply(data: dict | None) -> LastReply | None:
    if not data:
        return None
    return LastReply(
        sentiment=data["sentiment"],
        received_at=datetime.fromisoformat(data["received_at"]),
        campaign=_ref(data["campaign"]),
    )


def relationship_from_row(row) -> Relationship:
    campaigns, messages_sent, last, unsubscribe, suppressions = row
    return Relationship(
        campaigns=[_ref(c) for c in campaigns],
        messages_sent=messages_sent,
        last_reply=_reply(last),
        unsubscribe=_reply(unsubscribe),
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
    """The seats a user holds, accounts included, in a stable order (read from the
    primary, as everything that says who a request is and what it may do)."""
    return list(
        Member.objects.using(DEFAULT_DB_ALIAS)
        .filter(user=user)
        .select_related("account")
        .order_by("account__slug")
    )


#: The web session's key for the account a signed-in member acts in (the account switcher).
SESSION_ACCOUNT_KEY = "kit_account"


def member_for_request(request) -> Member | None:
    """The seat the signed-in user of ``request`` acts in, as the account switcher chose."""
    return member_for_session(
        user=request.user, account_slug=request.session.get(SESSION_ACCOUNT_KEY)
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
    return (
        Prospect.objects.filter(account=member.account, pk=prospect_id)
        .select_related("campaign")
        .first()
    )


def prospects_for_account(*, account: Account):
    return (
        Prospect.objects.filter(account=account)
        .select_related("campaign")
        .order_by("company_domain", "email")
    )


def account_knows_domain(*, account: Account, domain: str) -> bool:
    return Prospect.objects.filter(account=account, company_domain=domain).exists()
