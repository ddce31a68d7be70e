import pytest

from outreach.access import Actor


@pytest.fixture
def actor(module_admin):
    return Actor.for_member(module_admin)


@pytest.fixture
def other_actor(other_admin):
    return Actor.for_member(other_admin)
