"""Operator commands: create_account, create_member, seed_demo."""

import pytest
from django.core.management import CommandError, call_command

from outreach.models import Account, Campaign, Member, Reply, Suppression

pytestmark = pytest.mark.django_db


def run(*args):
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_account_defaults():
    out = run("create_account", "acme-sales", "--name", "Acme Sales")
    account = Account.objects.get(slug="acme-sales")
    assert account.outreach_addon is True
    assert account.subscription_status == "active"
    assert "Created account acme-sales (Acme Sales), with the Outreach add-on" in out


def test_create_account_options():
    run("create_account", "lapsed", "--no-outreach-addon", "--subscription", "canceled")
    account = Account.objects.get(slug="lapsed")
    assert (account.outreach_addon, account.subscription_status) == (False, "canceled")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Bad Slug"], "lower-case letters"),
        (["trailing-"], "lower-case letters"),
        (["x" * 65], "lower-case letters"),
    ],
)
def test_create_account_rejects_bad_slugs(args, message):
    with pytest.raises(CommandError, match=message):
        run("create_account", *args)
    assert not Account.objects.exists()


def test_create_account_rejects_duplicates():
    run("create_account", "acme")
    with pytest.raises(CommandError, match="already exists"):
        run("create_account", "acme")


def test_create_account_rejects_unknown_subscription():
    with pytest.raises(CommandError, match="invalid choice"):
        run("create_account", "acme", "--subscription", "trial")


def test_create_member_and_module_admin():
    run("create_account", "acme")
    out = run("create_member", "acme", "Jane@Acme.dev", "--module-admin")
    member = Member.objects.get(user__username="jane@acme.dev")
    assert member.is_module_admin
    assert "as Outreach module admin" in out
    run("create_account", "second")
    run("create_member", "second", "jane@acme.dev")
    assert Member.objects.filter(user__username="jane@acme.dev").count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "a@b.dev"], "no account with slug 'nope'"),
        (["acme", "not-an-email"], "not a valid email"),
    ],
)
def test_create_member_rejects_bad_arguments(args, message):
    run("create_account", "acme")
    with pytest.raises(CommandError, match=message):
        run("create_member", *args)
    assert not Member.objects.exists()


def test_create_member_twice_is_refused():
    run("create_account", "acme")
    run("create_member", "acme", "a@b.dev")
    with pytest.raises(CommandError, match="already a member"):
        run("create_member", "acme", "a@b.dev")


def test_seed_demo_covers_every_case_and_runs_twice():
    out = run("seed_demo", "--allow-insecure-demo")
    demo = Account.objects.get(slug="demo")
    assert "Created account demo" in out
    sentiments = set(Reply.objects.filter(account=demo).values_list("sentiment", flat=True))
    assert sentiments == set(Reply.Sentiment.values)
    assert set(Suppression.objects.filter(account=demo).values_list("kind", flat=True)) == {
        "address",
        "domain",
    }
    assert set(Campaign.objects.filter(account=demo).values_list("locale", flat=True)) == {
        "en",
        "de",
        "fr",
        "es",
        "pl",
    }
    assert Member.objects.filter(user__username="demo@kit.test").count() == 2
    assert "already present" in run("seed_demo", "--allow-insecure-demo")


def test_seed_demo_names_the_address_kit_serves_on(settings):
    """scripts/run sets KIT_PUBLIC_URL from KIT_ADDRESS: what it prints follows."""
    settings.KIT_PUBLIC_URL = "http://127.0.0.1:8765"
    out = run("seed_demo", "--allow-insecure-demo")
    assert "claude mcp add --transport http kit http://127.0.0.1:8765/mcp" in out
    assert "Sign in at http://127.0.0.1:8765/ as demo@kit.test" in out
    assert "8000" not in out
