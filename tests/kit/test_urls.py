"""The order of Kit's URL patterns: the agents' endpoints are tried first (kit/urls.py), which
is only safe while no other pattern could take one of their paths."""

import pytest
from django.urls import Resolver404, URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern

AGENTS = ("mcp", "api/")


def routes(patterns, prefix=""):
    """Every route of ``patterns`` as written (includes joined), in the order tried."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, route)
        else:
            assert isinstance(pattern, URLPattern)
            yield route


def test_the_agents_endpoints_are_tried_first():
    top = [str(p.pattern) for p in get_resolver().url_patterns]
    first_other = next(i for i, route in enumerate(top) if not route.startswith(AGENTS)
                       and route.lstrip("^") not in {"api/"})  # fmt: skip
    assert all(not route.lstrip("^").startswith(AGENTS) for route in top[first_other:])


def test_no_other_pattern_could_take_an_agents_path():
    top = get_resolver().url_patterns
    others = [p for p in top if not str(p.pattern).lstrip("^").startswith(AGENTS)]
    for route in routes(others):
        # A pattern that begins with a converter (``<str:domain>/``) could take any path.
        assert not route.startswith("<"), route
        # "mcp" is matched whole ("mcp/.well-known/..." is the OAuth metadata's), "api/"
        # as a beginning.
        assert route.lstrip("^").rstrip("$") != "mcp", route
        assert not route.lstrip("^").startswith("api/"), route
    # And as Django matches them (a regular expression may take any segment): none of the
    # other patterns resolves an agent's path.
    rest = URLResolver(RegexPattern(r"^/"), others)
    for path in ("/mcp", "/mcp/", "/api/", "/api/v1/recall", "/api/v1/business-memory/x",
                 "/api/v1/knowledge/search", "/api/schema/", "/api/anything"):  # fmt: skip
        with pytest.raises(Resolver404):
            rest.resolve(path)


def test_agents_paths_and_pages_resolve_to_their_views():
    assert resolve("/mcp").url_name == "mcp"
    assert resolve("/api/v1/recall").url_name
    assert resolve("/api/v1/nowhere").func.__name__ == "api_not_found"
    assert resolve("/.well-known/oauth-protected-resource/mcp").url_name == (
        "oauth-resource-metadata-mcp"
    )
    assert resolve("/mcp/.well-known/oauth-authorization-server").url_name == "oauth-server-mcp"
    assert resolve("/companies/acme.dev/").url_name == "company"
    assert resolve("/").url_name == "home"
