"""Writes to Kit's CRM used by operator commands and the demo seed."""

from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, set_token_value

from outreach import scopes as scope_names
from outreach.clients import operator_client
from outreach.models import (
    Account,
    Campaign,
    Member,
    Message,
    OAuthAccessTokenAccount,
    Prospect,
    Reply,
    Suppression,
)

_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


class OutreachInputError(ValueError):
    """Bad input to a CRM write, with a message that says what to change."""


def _clean_email(email: str) -> str:
    email = (email or "").strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise OutreachInputError(f"{email!r} is not a valid email address") from None
    return email


def account_create(
    *,
    slug: str,
    name: str = "",
    outreach_addon: bool = True,
    subscription_status: str = Account.Subscription.ACTIVE,
) -> Account:
    if not _SLUG.match(slug or ""):
        raise OutreachInputError(
            f"account slug {slug!r} must be 1-64 lower-case letters, digits or hyphens, "
            "starting and ending with a letter or digit"
        )
    if subscription_status not in Account.Subscription.values:
        raise OutreachInputError(
            f"subscription {subscription_status!r} is not one of "
            f"{', '.join(Account.Subscription.values)}"
        )
    if Account.objects.filter(slug=slug).exists():
        raise OutreachInputError(f"an account with slug {slug!r} already exists")
    try:
        with transaction.atomic():
            return Account.objects.create(
                slug=slug,
                name=(name or slug).strip()[:200],
                outreach_addon=outreach_addon,
                subscription_status=subscription_status,
            )
    except IntegrityError:
        raise OutreachInputError(f"an account with slug {slug!r} already exists") from None


@transaction.atomic
def member_create(*, account: Account, email: str, is_module_admin: bool = False) -> Member:
    """Give the user with ``email`` (created if new) a seat in ``account``."""
    email = _clean_email(email)
    User = get_user_model()
    user = User.objects.filter(username=email).first()
    if user is None:
        user = User(username=email, email=email)
        user.set_unusable_password()
        user.save()
    if Member.objects.filter(user=user, account=account).exists():
        raise OutreachInputError(f"{email} is already a member of {account.slug}")
    return Member.objects.create(user=user, account=account, is_module_admin=is_module_admin)


def campaign_create(
    *, account: Account, name: str, locale: str = "en", status: str = Campaign.Status.ACTIVE
) -> Campaign:
    return Campaign.objects.create(account=account, name=name, locale=locale, status=status)


def prospect_create(*, campaign: Campaign, email: str, company_domain: str) -> Prospect:
    return Prospect.objects.create(
        account=campaign.account,
        campaign=campaign,
        email=_clean_email(email),
        company_domain=company_domain.strip().lower(),
    )


def message_record(*, prospect: Prospect, subject: str, sent_at: datetime | None = None) -> Message:
    return Message.objects.create(
        account=prospect.account,
        prospect=prospect,
        subject=subject,
        status=Message.Status.SENT if sent_at else Message.Status.DRAFT,
        sent_at=sent_at,
    )


def reply_record(*, prospect: Prospect, sentiment: str, received_at: datetime) -> Reply:
    return Reply.objects.create(
        account=prospect.account, prospect=prospect, sentiment=sentiment, received_at=received_at
    )


def suppression_add(*, account: Account, kind: str, value: str, reason: str = "") -> Suppression:
    return Suppression.objects.create(
        account=account, kind=kind, value=value.strip().lower(), reason=reason
    )


def access_token_issue(
    *,
    member: Member,
    scopes: list[str],
    client_name: str,
    expires_days: int,
    base_url: str,
) -> str:
    """Issue a bearer token for ``member`` (for clients that take a header). Returns it.

    The token belongs to the operator-created client named ``client_name``
    (:func:`outreach.clients.operator_client`), never to a self-registered one.
    """
    unknown = sorted(set(scopes) - set(scope_names.ALL))
    if unknown or not scopes:
        raise OutreachInputError(
            f"unknown scope(s) {', '.join(unknown)}; use {' and/or '.join(scope_names.ALL)}"
            if unknown
            else "give at least one scope"
        )
    if not 1 <= expires_days <= 365:
        raise OutreachInputError("--expires-days must be between 1 and 365")
    client_name = (client_name or "").strip()
    if not client_name or len(client_name) > 255:
        raise OutreachInputError("--client must be a name of 1 to 255 characters")
    parts = urlsplit(base_url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise OutreachInputError(f"base URL {base_url!r} must start with http:// or https://")
    if parts.path.strip("/") or parts.query or parts.fragment or parts.username:
        raise OutreachInputError(
            f"base URL {base_url!r} must be an origin alone (scheme://host[:port]): the "
            "token is for its /mcp and /api/"
        )
    with transaction.atomic():
        application = operator_client(client_name)
        raw = secrets.token_urlsafe(32)
        base = base_url.rstrip("/")
        token = get_access_token_model()(
            user=member.user,
            application=application,
            scope=" ".join(dict.fromkeys(scopes)),
            expires=timezone.now() + timedelta(days=expires_days),
            resource=[f"{base}/mcp", f"{base}/api/"],
        )
        set_token_value(token, raw)
        token.save()
        OAuthAccessTokenAccount.objects.create(access_token=token, account=member.account)
    return raw
