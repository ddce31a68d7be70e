"""A REST client for tests: bearer token, and every answer checked against the OpenAPI
document (the ``api`` and ``api_for`` fixtures build it)."""

from jsonschema import Draft202012Validator


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
