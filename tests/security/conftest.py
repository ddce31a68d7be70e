# The REST client that checks every answer against the OpenAPI schema.
from tests.api.conftest import api, api_for, openapi  # noqa: F401
