"""OAuth 2.1 wiring: tokens bound to one account, bearer checks, the challenges clients read.

django-oauth-toolkit does the protocol (authorization code + PKCE, metadata, dynamic
registration, resource indicators). Kit adds the account: the consent page asks which
account the token acts for, :class:`KitOAuth2Validator` carries that choice from the
authorization code to every access and refresh token, and :func:`actor_for_token` turns a
verified token into the acting member.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import Subquery
from django.http import HttpRequest
from oauth2_provider.models import get_grant_model
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.oauth2_validators import OAuth2Validator

from outreach.access import Actor
from outreach.errors import Unauthenticated
from outreach.models import (
    Member,
    OAuthAccessTokenAccount,
    OAuthGrantAccount,
    OAuthRefreshTokenAccount,
)

SCOPES = ("outreach_read", "outreach_write")
MCP_PATH = "/mcp"
API_PATH = "/api/"


class KitOAuth2Validator(OAuth2Validator):
    def _create_authorization_code(self, request, code, expires=None):
        grant = super()._create_authorization_code(request, code, expires)
        account_id = getattr(request, "kit_account_id", None)
        if account_id:
            OAuthGrantAccount.objects.create(grant=grant, account_id=account_id)
        return grant

    def _create_access_token(self, expires, request, token, source_refresh_token=None):
        access_token = super()._create_access_token(expires, request, token, source_refresh_token)
        account_id = None
        if source_refresh_token is not None:
            binding = OAuthRefreshTokenAccount.objects.filter(
                refresh_token=source_refresh_token
            ).first()
            account_id = binding.account_id if binding else None
        elif getattr(request, "code", None):
            grant = (
                get_grant_model()
                .objects.filter(code=request.code, application=request.client)
                .first()
            )
            binding = OAuthGrantAccount.objects.filter(grant=grant).first() if grant else None
            account_id = binding.account_id if binding else None
        if account_id:
            OAuthAccessTokenAccount.objects.create(access_token=access_token, account_id=account_id)
        return access_token

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous):
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous
        )
        binding = OAuthAccessTokenAccount.objects.filter(access_token=access_token).first()
        if binding:
            OAuthRefreshTokenAccount.objects.create(
                refresh_token=refresh_token, account_id=binding.account_id
            )
        return refresh_token


def public_base_url(request: HttpRequest) -> str:
    """The origin clients reach Kit at (``KIT_PUBLIC_URL`` wins over the request)."""
    configured = getattr(settings, "KIT_PUBLIC_URL", "")
    if configured:
        return configured.rstrip("/")
    return request.build_absolute_uri("/").rstrip("/")


def resource_metadata_url(request: HttpRequest, path: str = MCP_PATH) -> str:
    return f"{public_base_url(request)}/.well-known/oauth-protected-resource{path.rstrip('/')}"


def bearer_challenge(
    request: HttpRequest,
    *,
    resource_path: str = MCP_PATH,
    error: str = "",
    description: str = "",
    scope: str = "",
) -> str:
    """A ``WWW-Authenticate`` value that tells a client where to authorize (RFC 9728)."""
    parts = [f'resource_metadata="{resource_metadata_url(request, resource_path)}"']
    if error:
        parts.insert(0, f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    parts.append(f'scope="{scope or " ".join(SCOPES)}"')
    return "Bearer " + ", ".join(parts)


def verify_bearer(request: HttpRequest, *, resource_path: str):
    """The valid access token of ``request`` for the resource at ``resource_path``.

    Raises :class:`Unauthenticated` with the reason. A token must name this resource
    (RFC 8707): a token issued for another resource, or for none, is refused.
    """
    header = request.headers.get("Authorization", "")
    if not header:
        raise Unauthenticated(
            "Sign in first: send an OAuth access token as 'Authorization: Bearer <token>'.",
            details={"reason": "missing_token"},
        )
    if not header.startswith("Bearer ") or not header[7:].strip():
        raise Unauthenticated(
            "The Authorization header must be 'Bearer <token>'.",
            details={"reason": "malformed_header"},
        )
    valid, oauth_request = get_oauthlib_core().verify_request(request, scopes=[])
    token = getattr(oauth_request, "access_token", None)
    if not valid or token is None:
        described = getattr(oauth_request, "oauth2_error", {}) or {}
        raise Unauthenticated(
            "The access token is invalid, expired or not meant for this resource; authorize again.",
            details={
                "reason": "invalid_token",
                "description": str(described.get("error_description", "")),
            },
        )
    target = f"{public_base_url(request)}{resource_path}"
    if not token.resource or not token.allows_audience(target):
        raise Unauthenticated(
            f"This access token was not issued for {target}; authorize again for it.",
            details={"reason": "invalid_audience"},
        )
    return token


def actor_for_token(token) -> Actor:
    """The member a token acts as, in the one account it was granted for (one query)."""
    account_of_token = OAuthAccessTokenAccount.objects.filter(access_token=token).values(
        "account_id"
    )[:1]
    member = (
        Member.objects.select_related("account", "user")
        .filter(user_id=token.user_id, account_id=Subquery(account_of_token))
        .first()
    )
    if member is not None:
        return Actor.for_member(member, oauth_application=token.application)
    binding = (
        OAuthAccessTokenAccount.objects.select_related("account").filter(access_token=token).first()
    )
    if binding is None:
        raise Unauthenticated(
            "This token is not bound to a Kit account. Authorize again and pick an account.",
            details={"reason": "no_account"},
        )
    raise Unauthenticated(
        f"The token's user is no longer a member of account '{binding.account.slug}'.",
        details={"reason": "not_a_member"},
    )
