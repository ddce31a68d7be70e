import pytest

from tests import factories


@pytest.fixture
def account(db):
    return factories.account("acme-sales", name="Acme Sales")


@pytest.fixture
def other_account(db):
    return factories.account("rival-co", name="Rival Co")


@pytest.fixture
def member(account):
    return factories.member(account, "reader@example.com")


@pytest.fixture
def module_admin(account):
    return factories.member(account, "admin@example.com", admin=True)


@pytest.fixture
def other_admin(other_account):
    return factories.member(other_account, "admin@rival.example", admin=True)
