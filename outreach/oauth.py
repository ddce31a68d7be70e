"""OAuth 2.1 wiring: tokens bound to one account, bearer checks, the challenges clients read.

django-oauth-toolkit does the protocol (authorization code + PKCE, metadata, dynamic
registration, resource indicators). Kit adds the account: the consent page asks which
account the token acts for, :class:`KitOAuth2Validator` carries that choice from the
authorization code to every access and refresh token, and :func:`authenticate_bearer` turns
a request's token into the acting member.
"""

from __future__ import annotations

import hashlib
import json
import logging
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.models import (
    get_access_token_model,
    get_application_model,
    get_grant_model,
    get_refresh_token_model,
)
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors

from outreach import scopes
from outreach.access import Actor
from outreach.clients import GRANT_TYPES
from outreach.errors import Unauthenticated
from outreach.models import (
    Account,
    Member,
    OAuthAccessTokenAccount,
    OAuthGrantAccount,
    OAuthRedeemedCode,
    OAuthRefreshTokenAccount,
)
from pgstatements import run_one

logger = logging.getLogger(__name__)

MCP_PATH = "/mcp"
API_PATH = "/api/"
#: Where RFC 8414 puts the authorization server's metadata for an issuer without a path.
METADATA_PATH = "/.well-known/oauth-authorization-server"


def _code_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def kit_resources(base_url: str) -> set[str]:
    """The resource indicators (RFC 8707) Kit issues tokens for: the MCP server and the API."""
    return {f"{base_url}{path}".rstrip("/") for path in (MCP_PATH, API_PATH)}


def resource_problem(resources: list[str], base_url: str) -> str | None:
    """Why a request for tokens naming ``resources`` is refused, or None: Kit issues tokens
    for exactly its MCP server and its API, never for the whole origin or anything else."""
    allowed = kit_resources(base_url)
    wrong = [r for r in resources if str(r).rstrip("/") not in allowed]
    if not wrong:
        return None
    return f"Kit issues access only for {' and '.join(sorted(allowed))}, not {wrong[0][:200]}."


class KitOAuthLibCore(OAuthLibCore):
    """Hands oauthlib the request's absolute URI, so the validator knows Kit's origin, and
    labels every token endpoint answer as the JSON it is (oauthlib leaves the type out of
    some errors, such as ``invalid_target``)."""

    def _get_escaped_full_path(self, request):
        return request.build_absolute_uri(super()._get_escaped_full_path(request))

    def create_token_response(self, request):
        uri, headers, body, status = super().create_token_response(request)
        headers = dict(headers or {})
        headers.setdefault("Content-Type", "application/json")
        return uri, headers, body, status


def configured_origin() -> str:
    """Kit's public origin where no request tells it (operator commands): ``KIT_PUBLIC_URL``,
    else ``http://KIT_ADDRESS``, the origin ``scripts/run`` serves and names."""
    return (settings.KIT_PUBLIC_URL or f"http://{settings.KIT_ADDRESS}").rstrip("/")


def origin_of(absolute_uri: str) -> str:
    """Kit's public origin: ``KIT_PUBLIC_URL``, else the origin of ``absolute_uri``."""
    if settings.KIT_PUBLIC_URL:
        return settings.KIT_PUBLIC_URL.rstrip("/")
    parts = urlsplit(absolute_uri or "")
    return f"{parts.scheme}://{parts.netloc}"


class KitOAuth2Validator(OAuth2Validator):
    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        # Tokens only ever come from a member's consent (and its refreshes).
        if grant_type not in GRANT_TYPES:
            return False
        return super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs)

    def _validate_resource_uris(self, request, resources):
        super()._validate_resource_uris(request, resources)
        problem = resource_problem(resources, origin_of(request.uri))
        if problem:
            raise errors.CustomOAuth2Error(
                error="invalid_target", description=problem, request=request
            )

    def validate_code(self, client_id, code, client, request, *args, **kwargs):
        valid = super().validate_code(client_id, code, client, request, *args, **kwargs)
        if not valid and not get_grant_model().objects.filter(code=code).exists():
            _revoke_tokens_of_replayed_code(code)
        return valid

    # Between validate_code and the code's end, a second exchange of the same code may have
    # consumed it: every later read of the grant answers that as the replay it is (400
    # invalid_grant, the first exchange's tokens revoked), never as a missing row (500).
    def get_code_challenge(self, code, request):
        with _code_consumed_meanwhile(code, request):
            return super().get_code_challenge(code, request)

    def get_code_challenge_method(self, code, request):
        with _code_consumed_meanwhile(code, request):
            return super().get_code_challenge_method(code, request)

    def confirm_redirect_uri(self, client_id, code, redirect_uri, client, *args, **kwargs):
        request = kwargs.get("request") or (args[0] if args else None)
        with _code_consumed_meanwhile(code, request):
            return super().confirm_redirect_uri(
                client_id, code, redirect_uri, client, *args, **kwargs
            )

    def invalidate_authorization_code(self, client_id, code, request, *args, **kwargs):
        # Two exchanges of one code at the same moment both pass validate_code; the one
        # that finds the code already consumed here revokes every token of the code,
        # the other exchange's included.
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except errors.InvalidGrantError:
            _revoke_tokens_of_replayed_code(code)
            raise

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
            OAuthRedeemedCode.objects.create(
                code_hash=_code_hash(request.code), access_token_id=access_token.pk
            )
        if account_id:
            OAuthAccessTokenAccount.objects.create(access_token=access_token, account_id=account_id)
        return access_token

    def _create_refresh_token(self, request, refresh_token_code, access_token, previous):
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous
        )
        if previous is None and getattr(request, "code", None):
            OAuthRedeemedCode.objects.filter(
                code_hash=_code_hash(request.code), access_token_id=access_token.pk
            ).update(token_family=refresh_token.token_family)
        binding = OAuthAccessTokenAccount.objects.filter(access_token=access_token).first()
        if binding:
            OAuthRefreshTokenAccount.objects.create(
                refresh_token=refresh_token, account_id=binding.account_id
            )
        return refresh_token


@contextmanager
def _code_consumed_meanwhile(code: str, request):
    try:
        yield
    except get_grant_model().DoesNotExist:
        _revoke_tokens_of_replayed_code(code)
        raise errors.InvalidGrantError(request=request) from None


def _revoke_tokens_of_replayed_code(code: str) -> None:
    """A used authorization code came back: it has leaked, so the tokens it gave are
    revoked, refreshed descendants included (RFC 6749 section 4.1.2)."""
    redeemed = list(OAuthRedeemedCode.objects.filter(code_hash=_code_hash(code)))
    if not redeemed:
        return
    for record in redeemed:
        if record.token_family:
            get_refresh_token_model().revoke_family(record.token_family)
        get_access_token_model().objects.filter(pk=record.access_token_id).delete()
    logger.warning(
        "an authorization code was presented again; revoked the tokens of its first use "
        "(access token ids %s)",
        ", ".join(str(r.access_token_id) for r in redeemed),
    )


def prune_redeemed_codes(*, older_than: timedelta = timedelta(days=1)) -> int:
    deleted, _ = OAuthRedeemedCode.objects.filter(
        redeemed_at__lt=timezone.now() - older_than
    ).delete()
    return deleted


def public_base_url(request: HttpRequest) -> str:
    """The origin clients reach Kit at (``KIT_PUBLIC_URL`` wins over the request).

    Read on every bearer request, so the request's own origin is its scheme and host as
    ``build_absolute_uri`` would start it, without building and parsing an address."""
    if settings.KIT_PUBLIC_URL:
        return settings.KIT_PUBLIC_URL.rstrip("/")
    return f"{request.scheme}://{request.get_host()}"


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
    parts.append(f'scope="{scope or " ".join(scopes.ALL)}"')
    return "Bearer " + ", ".join(parts)


@dataclass(frozen=True)
class BearerGrant:
    """A verified access token: what it may do, and the member it acts as."""

    token_id: int
    scopes: frozenset[str]
    actor: Actor


# Token, client, account binding, member and user in one statement: every agent request
# starts here, so it is one round trip, not five ORM queries. Built once from the models
# the settings name (swappable user, token and client models included).
@cache
def _bearer_sql() -> str:
    User = get_user_model()
    token, application = get_access_token_model(), get_application_model()
    return f"""
SELECT t.id, t.scope, t.expires, t.resource, t.user_id,
       app.id, app.name,
       acc.id, acc.slug, acc.name, acc.outreach_addon, acc.subscription_status,
       m.id, m.is_module_admin, u.{User.USERNAME_FIELD}, u.{User.get_email_field_name()},
       u.is_active
  FROM {token._meta.db_table} t
  LEFT JOIN {application._meta.db_table} app ON app.id = t.application_id
  LEFT JOIN {OAuthAccessTokenAccount._meta.db_table} b ON b.access_token_id = t.id
  LEFT JOIN {Account._meta.db_table} acc ON acc.id = b.account_id
  LEFT JOIN {Member._meta.db_table} m ON m.user_id = t.user_id AND m.account_id = b.account_id
  LEFT JOIN {User._meta.db_table} u ON u.id = t.user_id
 WHERE t.token_checksum = %s
"""  # noqa: S608  (names from the models, the checksum is a parameter)


def authenticate_bearer(request: HttpRequest, *, resource_path: str) -> BearerGrant:
    """Verify the request's bearer token for the resource at ``resource_path``.

    Raises :class:`Unauthenticated` with the reason. The token must be unexpired, name this
    resource (RFC 8707: a token for another resource, or for none, is refused), be bound
    to an account, and its user must still be an active member of that account.
    """
    header = request.headers.get("Authorization", "")
    if not header:
        raise Unauthenticated(
            "Sign in first: send an OAuth access token as 'Authorization: Bearer <token>'.",
            details={"reason": "missing_token"},
        )
    raw = header[7:].strip() if header.startswith("Bearer ") else ""
    if not raw:
        raise Unauthenticated(
            "The Authorization header must be 'Bearer <token>'.",
            details={"reason": "malformed_header"},
        )
    rows = run_one(_bearer_sql(), [hashlib.sha256(raw.encode("utf-8")).hexdigest()])
    row = rows[0] if rows else None
    invalid = Unauthenticated(
        "The access token is invalid, expired or not meant for this resource; authorize again.",
        details={"reason": "invalid_token"},
    )
    if row is None:
        raise invalid
    (token_id, scope, expires, resource, user_id, app_id, app_name, account_id, slug, name,
     addon, subscription, member_id, is_admin, username, email, active) = row  # fmt: skip
    if expires is None or expires <= timezone.now():
        raise invalid
    target = f"{public_base_url(request)}{resource_path}"
    audiences = json.loads(resource) if isinstance(resource, str) else (resource or [])
    # Exactly this resource: a token for the whole origin is not one for /mcp or /api/.
    if target.rstrip("/") not in {str(a).rstrip("/") for a in audiences}:
        raise Unauthenticated(
            f"This access token was not issued for {target}; authorize again for it.",
            details={"reason": "invalid_audience"},
        )
    if account_id is None:
        raise Unauthenticated(
            "This token is not bound to a Kit account. Authorize again and pick an account.",
            details={"reason": "no_account"},
        )
    if member_id is None or not active:
        raise Unauthenticated(
            f"The token's user is no longer a member of account '{slug}'.",
            details={"reason": "not_a_member"},
        )
    # Instances as the database would load them (``from_db``): no field defaults run, so
    # no client secret or id is generated only to be thrown away on every request.
    account = Account.from_db(
        DEFAULT_DB_ALIAS,
        ["id", "slug", "name", "outreach_addon", "subscription_status"],
        [account_id, slug, name, addon, subscription],
    )
    User = get_user_model()
    user = User.from_db(
        DEFAULT_DB_ALIAS,
        ["id", User.USERNAME_FIELD, User.get_email_field_name(), "is_active"],
        [user_id, username, email, active],
    )
    member = Member.from_db(
        DEFAULT_DB_ALIAS,
        ["id", "user_id", "account_id", "is_module_admin"],
        [member_id, user_id, account_id, is_admin],
    )
    member.user, member.account = user, account
    application = (
        get_application_model().from_db(DEFAULT_DB_ALIAS, ["id", "name"], [app_id, app_name])
        if app_id
        else None
    )
    return BearerGrant(
        token_id=token_id,
        scopes=frozenset(scope.split()),
        actor=Actor.for_member(member, oauth_application=application),
    )
