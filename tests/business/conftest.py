import pytest

from outreach.services import access_token_issue


@pytest.fixture
def capacity(settings):
    """Change BUSINESS_MEMORY keys for one test: ``capacity(ACCOUNT_CAPACITY=3)``."""

    def apply(**values):
        settings.BUSINESS_MEMORY = {**getattr(settings, "BUSINESS_MEMORY", {}), **values}

    return apply


@pytest.fixture
def bearer(module_admin) -> dict:
    """Headers of a module admin's REST client with both scopes."""
    token = access_token_issue(
        member=module_admin,
        scopes=["outreach_read", "outreach_write"],
        client_name="REST client",
        expires_days=1,
        base_url="http://testserver",
    )
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}
