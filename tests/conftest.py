import pytest

from tests import factories
from tests.live import LiveServer


@pytest.fixture(scope="session")
def live_kit(django_db_setup, django_db_blocker):
    """A gunicorn process serving Kit on loopback from the test database.

    It only sees committed data: tests that use it need ``transactional_db``.
    """
    from django.db import connection

    from kit.db import database_url

    server = LiveServer(database_url(connection.settings_dict))
    yield server
    server.stop()


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


@pytest.fixture
def limits(settings):
    """Change PROSPECT_MEMORY keys for one test: ``limits(DOMAIN_NOTE_LIMIT=3)``."""

    def apply(**values):
        settings.PROSPECT_MEMORY = {**settings.PROSPECT_MEMORY, **values}

    return apply
