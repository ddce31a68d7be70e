import pytest

from tests.helpers import bearer as headers


@pytest.fixture
def capacity(settings):
    """Change BUSINESS_MEMORY keys for one test: ``capacity(ACCOUNT_CAPACITY=3)``."""

    def apply(**values):
        settings.BUSINESS_MEMORY = {**getattr(settings, "BUSINESS_MEMORY", {}), **values}

    return apply


@pytest.fixture
def bearer(module_admin) -> dict:
    """Headers of a module admin's REST client with both scopes."""
    return headers(module_admin, client_name="REST client")
