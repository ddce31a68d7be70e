"""Relationship selectors: what an account has done with a company."""

from datetime import timedelta

import pytest
from django.db import IntegrityError
from django.utils import timezone

from outreach.models import Message, Suppression
from outreach.selectors import relationship_for_domain
from outreach.services import suppression_add
from tests import factories

pytestmark = pytest.mark.django_db


def test_unknown_company_has_no_relationship(account):
    rel = relationship_for_domain(account=account, domain="acme.dev")
    assert rel.campaigns == []
    assert rel.messages_sent == 0
    assert rel.last_reply is None
    assert rel.suppressed is False


def test_campaigns_messages_and_last_reply(account):
    spring = factories.campaign(account, "Spring", locale="de")
    autumn = factories.campaign(account, "Autumn")
    founder = factories.prospect(spring, "founder@acme.dev")
    cto = factories.prospect(autumn, "cto@acme.dev")
    factories.sent(founder, 2)
    factories.sent(cto, 1)
    Message.objects.create(account=account, prospect=cto, subject="draft")  # not sent
    now = timezone.now()
    factories.reply(founder, "positive", now - timedelta(days=3))
    factories.reply(cto, "negative", now - timedelta(days=1))

    rel = relationship_for_domain(account=account, domain="acme.dev")
    assert [c.name for c in rel.campaigns] == ["Autumn", "Spring"]
    assert rel.campaigns[1].locale == "de"
    assert rel.messages_sent == 3
    assert rel.last_reply.sentiment == "negative"
    assert rel.last_reply.campaign.name == "Autumn"


def test_other_accounts_history_is_invisible(account, other_account):
    theirs = factories.prospect(factories.campaign(other_account), "ceo@acme.dev")
    factories.sent(theirs, 5)
    factories.reply(theirs, "bounce")
    suppression_add(account=other_account, kind="domain", value="acme.dev")

    rel = relationship_for_domain(account=account, domain="acme.dev")
    assert (rel.campaigns, rel.messages_sent, rel.last_reply, rel.suppressed) == (
        [],
        0,
        None,
        False,
    )


def test_domain_suppression_matches_company_and_subdomains(account):
    suppression_add(account=account, kind="domain", value="mail.acme.dev")
    suppression_add(account=account, kind="domain", value="notacme.dev")
    matches = relationship_for_domain(account=account, domain="acme.dev").suppression_matches
    assert [(m.kind, m.value) for m in matches] == [("domain", "mail.acme.dev")]


def test_address_suppression_matches_only_that_address(account):
    suppression_add(account=account, kind="address", value="ceo@acme.dev")
    assert relationship_for_domain(account=account, domain="acme.dev").suppression_matches == []
    assert not relationship_for_domain(
        account=account, domain="acme.dev", address="cto@acme.dev"
    ).suppressed
    rel = relationship_for_domain(account=account, domain="acme.dev", address="CEO@acme.dev")
    assert rel.suppressed
    assert [(m.kind, m.value) for m in rel.suppression_matches] == [("address", "ceo@acme.dev")]


def test_suppression_constraints(account):
    suppression_add(account=account, kind="domain", value="acme.dev")
    with pytest.raises(IntegrityError):
        Suppression.objects.create(account=account, kind="domain", value="acme.dev")


def test_suppression_kind_must_match_value(account):
    with pytest.raises(IntegrityError):
        Suppression.objects.create(account=account, kind="domain", value="ceo@acme.dev")


def test_message_sent_at_must_match_status(account):
    prospect = factories.prospect(factories.campaign(account), "a@acme.dev")
    with pytest.raises(IntegrityError):
        Message.objects.create(account=account, prospect=prospect, status="sent")
