import pytest
from jsonschema import Draft202012Validator

from outreach.services import access_token_issue


def issue(member, scopes=("outreach_read", "outreach_write"), base_url="http://testserver"):
    return access_token_issue(
        member=member,
        scopes=list(scopes),
        client_name="REST client",
        expires_days=1,
        base_url=base_url,
    )


class Api:
    """A REST client with a bearer token that checks every answer against the OpenAPI schema."""

    def __init__(self, client, token, schema):
        self.client = client
        self.token = token
        self.schema = schema

    def _headers(self):
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}

    def call(self, method, path, template, data=None, **params):
        kwargs = self._headers()
        if method in ("post", "put", "patch"):
            response = getattr(self.client, method)(
                path, data=data, content_type="application/json", **kwargs
            )
        elif method == "get":
            response = self.client.get(path, data=params or None, **kwargs)
        else:
            response = getattr(self.client, method)(path, **kwargs)
        self.check(response, method, template)
        return response

    def check(self, response, method, template):
        operation = self.schema["paths"][template][method]
        spec = operation["responses"].get(str(response.status_code))
        assert spec is not None, (
            f"{method.upper()} {template} answered undocumented {response.status_code}"
        )
        content = spec.get("content", {}).get("application/json")
        if content:
            Draft202012Validator(content["schema"]).validate(response.json())


@pytest.fixture(scope="session")
def openapi():
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


@pytest.fixture
def api(client, module_admin, openapi):
    return Api(client, issue(module_admin), openapi)


@pytest.fixture
def api_for(client, openapi):
    def make(member, scopes=("outreach_read", "outreach_write"), base_url="http://testserver"):
        return Api(client, issue(member, scopes, base_url), openapi)

    return make
