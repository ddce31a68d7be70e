from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from oauth2_provider import views as oauth2_views

from kit import metrics, readiness, views
from outreach import views as outreach_views
from outreach.api import WritingGuideApi, api_not_found
from outreach.mcp.views import mcp_endpoint
from outreach.oauth import API_PATH, MCP_PATH
from outreach.views import (
    KitAuthorizationView,
    KitClientManagementView,
    KitClientRegistrationView,
    KitResourceMetadataView,
    KitServerMetadataView,
)

# django-oauth-toolkit under /o/, and its RFC 8414 / RFC 9728 metadata at the origin where
# MCP clients look for it, in one namespace so the metadata can name the endpoints. No token
# introspection (RFC 7662): Kit's resource servers are Kit itself, and a self-registered
# client must not learn about other clients' tokens.
oauth2_patterns = (
    [
        path("o/authorize/", KitAuthorizationView.as_view(), name="authorize"),
        path("o/token/", oauth2_views.TokenView.as_view(), name="token"),
        path("o/revoke_token/", oauth2_views.RevokeTokenView.as_view(), name="revoke-token"),
        path("o/register/", KitClientRegistrationView.as_view(), name="dcr-register"),
        path(
            "o/register/<str:client_id>/",
            KitClientManagementView.as_view(),
            name="dcr-register-management",
        ),
        # RFC 8414: Kit's one issuer at the root, and where an MCP client that takes the
        # endpoint's path for the issuer's looks (path-inserted and path-appended).
        *[
            path(route, KitServerMetadataView.as_view(), name=name)
            for route, name in [
                (".well-known/oauth-authorization-server", "oauth-server-metadata"),
                (f".well-known/oauth-authorization-server{MCP_PATH}", "oauth-server-metadata-mcp"),
                (f"{MCP_PATH[1:]}/.well-known/oauth-authorization-server", "oauth-server-mcp"),
            ]
        ],
        # RFC 9728: the metadata of each of Kit's two resources, and of nothing else (the
        # origin itself is not one: Kit issues no token for it).
        *[
            path(
                f".well-known/oauth-protected-resource{resource.rstrip('/')}",
                KitResourceMetadataView.as_view(),
                name=f"oauth-resource-metadata-{resource.strip('/')}",
            )
            for resource in (MCP_PATH, API_PATH)
        ],
    ],
    "oauth2_provider",
)

handler500 = "kit.views.server_error"

# The agents' endpoints first: Django tries the patterns in order on every request, and
# most requests are theirs (the pages' dozens of patterns cost an API call 30 us to pass).
# No page pattern begins with "mcp" or "api/", so the order changes no match.
urlpatterns = [
    path(MCP_PATH[1:], mcp_endpoint, name="mcp"),
    path("api/v1/", include("prospect_memory.notes.api.urls")),
    path("api/v1/business-memory/", include("prospect_memory.business.api.urls")),
    path("api/v1/knowledge/", include("prospect_memory.knowledge.api.urls")),
    path("api/v1/", include("prospect_memory.lifecycle.api.urls")),
    path("api/v1/writing-guides/<str:locale>", WritingGuideApi.as_view(), name="api-guide"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    re_path(r"^api/", api_not_found),
    path("", outreach_views.home, name="home"),
    path("account/switch", outreach_views.account_switch, name="account-switch"),
    path("", include("prospect_memory.urls")),
    path("healthz", readiness.healthz, name="healthz"),
    path("readyz", readiness.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("", include(oauth2_patterns)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
