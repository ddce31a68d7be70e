from pathlib import Path

import pytest

from outreach.access import Actor
from tests import factories
from tests.fakes.gemini import API_KEY, FakeGemini
from tests.helpers import token
from tests.live import LiveServer
from tests.rest import Api

#: Fixtures that start processes, and the markers a test that uses one gets.
_PROCESS_MARKERS = {
    "live_kit": ("live",),
    "unthrottled_kit": ("live",),
    "worker": ("worker",),
    "chromium": ("browser",),
    "stack": ("live", "worker"),  # tests/faults: gunicorn, Redis and a worker it can kill
    "standby": ("replica", "slow"),  # a second PostgreSQL, streaming the test database
}
#: Folders (under tests/) whose every test is slow.
_SLOW_FOLDERS = {"faults", "fuzz", "load"}


def pytest_collection_modifyitems(config, items):
    """Mark each test by the processes its fixtures start and by its folder, so
    ``-m "not (live or worker or browser or slow)"`` is the fast subset (README,
    Development). A test that starts a process itself is marked ``slow`` where it is."""
    for item in items:
        for fixture in _PROCESS_MARKERS.keys() & set(item.fixturenames):
            for marker in _PROCESS_MARKERS[fixture]:
                item.add_marker(marker)
        folder = Path(item.path).relative_to(config.rootpath).parts[1:2]
        if _SLOW_FOLDERS & set(folder):
            item.add_marker("slow")


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


@pytest.fixture
def gemini(settings):
    """The Gemini provider, through the real SDK, against a local fake of the API."""
    fake = FakeGemini().start()
    settings.PROSPECT_MEMORY = {
        **settings.PROSPECT_MEMORY,
        "EMBEDDING_PROVIDER": "prospect_memory.core.embeddings.remote.GeminiProvider",
        "EMBEDDING_OPTIONS": {"api_key": API_KEY, "base_url": fake.url, "timeout": 2.0},
        "EMBED_TIME_BUDGET_SECONDS": 1.0,
    }
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def worker():
    """A real Celery worker (solo pool) on the test broker, for one test module."""
    from celery.contrib.testing.worker import start_worker

    from kit.celery import app

    app.conf.task_always_eager = False
    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        yield app
    app.conf.task_always_eager = True


@pytest.fixture
def admin_actor(module_admin):
    """A module admin of the account, acting on the web (no OAuth client)."""
    return Actor.for_member(module_admin)


@pytest.fixture
def member_actor(member):
    """A member of the account who is not a module admin."""
    return Actor.for_member(member)


@pytest.fixture
def agent_actor(admin_actor):
    """The module admin acting through an OAuth client: an agent, whose text is checked."""
    from oauth2_provider.models import get_application_model

    client = get_application_model().objects.create(
        name="Research agent",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )
    return Actor.for_member(admin_actor.member, oauth_application=client)


@pytest.fixture
def rival_actor(other_admin):
    """A module admin of another account."""
    return Actor.for_member(other_admin)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run what a write schedules for after its commit (promotion), as a real commit would:
    ``committed(entry_store, actor=..., ...)``."""

    def write(call, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return call(*args, **kwargs)

    return write


@pytest.fixture(scope="session")
def openapi():
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture
def api(client, module_admin, openapi):
    return Api(client, token(module_admin, client_name="REST client"), openapi)


@pytest.fixture
def api_for(client, openapi):
    def make(member, scopes=("outreach_read", "outreach_write"), base_url="http://testserver"):
        return Api(
            client, token(member, scopes, client_name="REST client", base_url=base_url), openapi
        )

    return make


@pytest.fixture
def notes(admin_actor):
    """Three notes about acme.dev holding ``factories.SECRET``."""
    return [
        factories.save_note(admin_actor, title=f"Title {i}", body=f"{factories.SECRET} #{i}").note
        for i in range(3)
    ]
