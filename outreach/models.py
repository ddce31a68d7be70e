"""Kit's CRM: accounts and their members, campaigns, prospects, messages, replies, suppressions.

Every tenant row carries ``account`` directly (not only through a parent), so every query
filters by it and the tables can be distributed by account without code changes.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower


class Account(models.Model):
    class Subscription(models.TextChoices):
        ACTIVE = "active", "Active"
        PAST_DUE = "past_due", "Past due"
        CANCELED = "canceled", "Canceled"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    outreach_addon = models.BooleanField(
        default=True, help_text="Whether the account has bought the Outreach add-on."
    )
    subscription_status = models.CharField(
        max_length=16, choices=Subscription.choices, default=Subscription.ACTIVE
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the account left Kit: its data is erased once the retention period "
        "for closed accounts has passed since.",
    )

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(subscription_status__in=["active", "past_due", "canceled"]),
                name="account_subscription_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class Member(models.Model):
    """A user's seat in one account. A user may hold seats in several accounts."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="members")
    is_module_admin = models.BooleanField(
        default=False, help_text="Outreach module admin: may save, compact and delete research."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["account", "user"]
        constraints = [
            models.UniqueConstraint(fields=["user", "account"], name="member_unique_per_account"),
        ]

    def __str__(self) -> str:
        return f"{self.user.get_username()} @ {self.account.slug}"


class Locale(models.TextChoices):
    EN = "en", "English"
    DE = "de", "Deutsch"
    FR = "fr", "Français"
    ES = "es", "Español"
    PL = "pl", "Polski"


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="campaigns")
    name = models.CharField(max_length=200)
    locale = models.CharField(max_length=2, choices=Locale.choices, default=Locale.EN)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["account", "name"]
        constraints = [
            models.UniqueConstraint(fields=["account", "name"], name="campaign_unique_name"),
            models.CheckConstraint(
                condition=Q(locale__in=["en", "de", "fr", "es", "pl"]),
                name="campaign_locale_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Prospect(models.Model):
    """A contact in a campaign. ``company_domain`` is the registrable domain, lower case."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="prospects")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="prospects")
    email = models.EmailField(max_length=254)
    company_domain = models.CharField(max_length=253)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["email"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "email"], name="prospect_unique_email_per_campaign"
            ),
            models.CheckConstraint(
                condition=Q(company_domain=Lower("company_domain")) & ~Q(company_domain=""),
                name="prospect_company_domain_lowercase",
            ),
            models.CheckConstraint(
                condition=Q(email=Lower("email")), name="prospect_email_lowercase"
            ),
        ]
        indexes = [
            models.Index(fields=["account", "company_domain"], name="prospect_account_domain"),
            models.Index(fields=["account", "email"], name="prospect_account_email"),
        ]

    def __str__(self) -> str:
        return self.email


class Message(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        SENT = "sent", "Sent"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="messages")
    prospect = models.ForeignKey(Prospect, on_delete=models.CASCADE, related_name="messages")
    subject = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DRAFT)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A sent message has a send time; a draft has none.
            models.CheckConstraint(
                condition=(Q(status="sent") & Q(sent_at__isnull=False))
                | (Q(status="draft") & Q(sent_at__isnull=True)),
                name="message_sent_at_matches_status",
            ),
        ]
        indexes = [
            models.Index(fields=["account", "prospect", "status"], name="message_account_prospect"),
        ]

    def __str__(self) -> str:
        return self.subject or f"message {self.pk}"


class Reply(models.Model):
    class Sentiment(models.TextChoices):
        POSITIVE = "positive", "Positive"
        NEUTRAL = "neutral", "Neutral"
        NEGATIVE = "negative", "Negative"
        BOUNCE = "bounce", "Bounce"
        OUT_OF_OFFICE = "out_of_office", "Out of office"
        UNSUBSCRIBE = "unsubscribe", "Unsubscribe"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="replies")
    prospect = models.ForeignKey(Prospect, on_delete=models.CASCADE, related_name="replies")
    received_at = models.DateTimeField()
    sentiment = models.CharField(max_length=16, choices=Sentiment.choices)

    class Meta:
        verbose_name_plural = "replies"
        ordering = ["-received_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    sentiment__in=[
                        "positive",
                        "neutral",
                        "negative",
                        "bounce",
                        "out_of_office",
                        "unsubscribe",
                    ]
                ),
                name="reply_sentiment_valid",
            ),
        ]
        indexes = [
            models.Index(
                fields=["account", "prospect", "-received_at"], name="reply_account_prospect"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sentiment} reply"


class Suppression(models.Model):
    """An address or a whole domain the account must not contact."""

    class Kind(models.TextChoices):
        ADDRESS = "address", "Address"
        DOMAIN = "domain", "Domain"

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="suppressions")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    value = models.CharField(max_length=254, help_text="An email address or a domain, lower case.")
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["kind", "value"]
        constraints = [
            models.UniqueConstraint(
                fields=["account", "kind", "value"], name="suppression_unique_entry"
            ),
            models.CheckConstraint(
                condition=Q(value=Lower("value")) & ~Q(value=""), name="suppression_value_lowercase"
            ),
            models.CheckConstraint(
                condition=(Q(kind="address") & Q(value__contains="@"))
                | (Q(kind="domain") & ~Q(value__contains="@")),
                name="suppression_value_matches_kind",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.value}"


# --- OAuth: every token acts for one account ----------------------------------------------
# The member picks the account on the consent page; the choice travels from the
# authorization code to the access token and on to each refreshed token.


class OAuthGrantAccount(models.Model):
    grant = models.OneToOneField(
        settings.OAUTH2_PROVIDER_GRANT_MODEL, on_delete=models.CASCADE, related_name="kit_account"
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"grant for {self.account.slug}"


class OAuthAccessTokenAccount(models.Model):
    access_token = models.OneToOneField(
        settings.OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL,
        on_delete=models.CASCADE,
        related_name="kit_account",
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"token for {self.account.slug}"


class OAuthRefreshTokenAccount(models.Model):
    refresh_token = models.OneToOneField(
        settings.OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL,
        on_delete=models.CASCADE,
        related_name="kit_account",
    )
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")

    def __str__(self) -> str:
        return f"refresh token for {self.account.slug}"


class ClientRateWindow(models.Model):
    """Writes per OAuth client (or web session) per account per minute, for rate limiting."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    client_key = models.CharField(max_length=64)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "client_key", "window_start"], name="rate_window_unique"
            ),
        ]
        indexes = [models.Index(fields=["window_start"], name="rate_window_age")]

    def __str__(self) -> str:
        return f"{self.client_key} @ {self.window_start}: {self.count}"


class AddressRateWindow(models.Model):
    """Requests of one kind per client address per window (e.g. client registrations)."""

    action = models.CharField(max_length=32)
    address = models.CharField(max_length=64)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["action", "address", "window_start"], name="address_window_unique"
            ),
        ]
        indexes = [models.Index(fields=["window_start"], name="address_window_age")]

    def __str__(self) -> str:
        return f"{self.action} from {self.address} @ {self.window_start}: {self.count}"


# --- OAuth clients: who vouches for them, and which codes were used ------------------------


class OAuthClientVerification(models.Model):
    """An operator vouched for a self-registered OAuth client.

    Anyone may register a client (RFC 7591) under any name; the consent page marks such a
    client unverified until an operator verifies it here. Changing the client's name or
    redirect URIs afterwards removes the verification.
    """

    application = models.OneToOneField(
        settings.OAUTH2_PROVIDER_APPLICATION_MODEL,
        on_delete=models.CASCADE,
        related_name="kit_verification",
    )
    verified_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    verified_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        permissions = [("verify_client", "Can mark a self-registered OAuth client verified")]

    def __str__(self) -> str:
        return f"verification of client {self.application_id}"


class OAuthRedeemedCode(models.Model):
    """An authorization code that was exchanged, and the tokens it gave.

    A second exchange of the same code is refused by the grant check; this record lets Kit
    also revoke the tokens of the first exchange (RFC 6749 section 4.1.2), since the code
    has evidently leaked. Kept for a day, far beyond a code's ten-minute life.
    """

    code_hash = models.CharField(max_length=64, db_index=True)
    access_token_id = models.BigIntegerField()
    token_family = models.UUIDField(null=True, blank=True)
    redeemed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["redeemed_at"], name="redeemed_code_age")]

    def __str__(self) -> str:
        return f"redeemed code for token {self.access_token_id}"
