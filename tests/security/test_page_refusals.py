"""Every page refuses clearly (403, saying what is missing and who can fix it), never 500,
when the account lacks the Outreach add-on, its subscription is not active, the member is
not a module admin, or the account the member was acting in is gone from under them."""

import pytest
from django.test import Client

from outreach.access import Actor
from outreach.models import Account, Member
from tests import factories
from tests.factories import save_note

pytestmark = pytest.mark.django_db


@pytest.fixture
def locked(account, module_admin):
    """Pages of an account with a prospect and a note, before it loses access."""
    campaign = factories.campaign(account, "Spring")
    prospect = factories.prospect(campaign, "founder@acme.dev")
    note = save_note(Actor.for_member(module_admin)).note
    return {
        "home": "/",
        "prospect": f"/prospects/{prospect.pk}/",
        "company": "/companies/acme.dev/",
        "notes": "/companies/acme.dev/notes/",
        "delete": f"/notes/{note.id}/delete/",
        "health": "/health/",
        "lookup": "/companies/?domain=founder@acme.dev",
    }


def browser(member) -> Client:
    client = Client()
    client.force_login(member.user)
    return client


REFUSALS = {
    "addon": (
        {"outreach_addon": False},
        "addon_required",
        "does not have the Outreach add-on",
        "An account owner can add it under Billing",
    ),
    "past_due": (
        {"subscription_status": Account.Subscription.PAST_DUE},
        "subscription_inactive",
        "has a past due subscription",
        "An account owner can bring billing up to date",
    ),
    "canceled": (
        {"subscription_status": Account.Subscription.CANCELED},
        "subscription_inactive",
        "has a canceled subscription",
        "An account owner can bring billing up to date",
    ),
}


@pytest.mark.parametrize("refusal", REFUSALS)
@pytest.mark.parametrize(
    "page", ["home", "prospect", "company", "notes", "delete", "health", "lookup"]
)
def test_every_page_refuses_an_account_without_access(locked, account, module_admin, refusal, page):
    change, code, what, who = REFUSALS[refusal]
    Account.objects.filter(pk=account.pk).update(**change)
    response = browser(module_admin).get(locked[page])
    assert response.status_code == 403
    text = response.content.decode()
    assert what in text
    assert who in text
    assert code in text


@pytest.mark.parametrize("refusal", REFUSALS)
def test_a_delete_is_refused_too_and_changes_nothing(locked, account, module_admin, refusal):
    Account.objects.filter(pk=account.pk).update(**REFUSALS[refusal][0])
    client = browser(module_admin)
    response = client.post(locked["delete"])
    assert response.status_code == 403
    from prospect_memory.notes.models import Note

    assert Note.objects.count() == 1


@pytest.mark.parametrize("page", ["health", "delete"])
def test_module_admin_pages_refuse_other_members(locked, member, page):
    response = browser(member).get(locked[page])
    assert response.status_code == 403
    text = response.content.decode()
    assert "not_module_admin" in text
    assert "Ask an admin of the account to make you one" in text


def test_switching_to_an_account_without_access_refuses_its_pages(locked, module_admin):
    elsewhere = factories.account("no-addon-co", outreach_addon=False)
    factories.member(elsewhere, module_admin.user.username, admin=True)
    client = browser(module_admin)
    client.post("/account/switch", {"account": "no-addon-co"})
    for page in ("home", "company", "health"):
        response = client.get(locked[page])
        assert response.status_code == 403, page
        assert "no-addon-co" in response.content.decode()
    # Switching back restores access.
    client.post("/account/switch", {"account": module_admin.account.slug})
    assert client.get(locked["company"]).status_code == 200


def test_a_member_whose_seat_was_removed_gets_a_clear_page(locked, module_admin):
    client = browser(module_admin)
    assert client.get(locked["company"]).status_code == 200
    Member.objects.filter(pk=module_admin.pk).delete()
    for page in ("home", "company", "notes", "health"):
        response = client.get(locked[page])
        assert response.status_code == 403, page
        assert "not a member of any Kit account" in response.content.decode()


def test_a_member_moved_to_another_account_sees_it_not_the_old_one(locked, module_admin):
    other = factories.account("second-co")
    factories.member(other, module_admin.user.username)
    client = browser(module_admin)
    Member.objects.filter(pk=module_admin.pk).delete()
    # The session falls back to the seat the member still has; the old pages are not found.
    assert client.get("/").status_code == 200
    assert client.get(locked["company"]).status_code == 404
    assert client.get(locked["delete"]).status_code == 404
