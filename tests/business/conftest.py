import pytest

from outreach.access import Actor


@pytest.fixture
def admin_actor(module_admin):
    return Actor.for_member(module_admin)


@pytest.fixture
def member_actor(member):
    return Actor.for_member(member)


@pytest.fixture
def capacity(settings):
    """Change BUSINESS_MEMORY keys for one test: ``capacity(ACCOUNT_CAPACITY=3)``."""

    def apply(**values):
        settings.BUSINESS_MEMORY = {**getattr(settings, "BUSINESS_MEMORY", {}), **values}

    return apply
