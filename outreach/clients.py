"""OAuth clients: what a self-registered client may claim, and how far Kit trusts one.

Anyone may register a client (RFC 7591: MCP clients register themselves), so a client's
name is only what it calls itself. Kit therefore

- allows plain ``http`` redirect URIs on loopback only (RFC 8252 native clients), on
  registration and on every later update (RFC 7592);
- refuses names reserved for Kit itself (``KIT_RESERVED_CLIENT_NAMES``);
- shows every self-registered client as unverified on the consent page, with the host the
  authorization code will be sent to, until an operator verifies it; changing its name or
  redirect URIs takes the verification away again;
- issues operator tokens (``issue_token``) only through clients that operators created,
  never through a self-registered one of the same name.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from oauth2_provider.models import get_application_model

from outreach.models import OAuthClientVerification

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}


def _normalised_name(name: str) -> str:
    """Case, width (NFKD), accents, spacing and punctuation ignored: ``K-i t`` -> ``ki t``."""
    folded = unicodedata.normalize("NFKD", name).casefold()
    letters = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(re.sub(r"[\W_]+", " ", letters).split())


def reserved_name_problem(name: object) -> str | None:
    """Why a self-registered client may not call itself ``name``, or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    wanted = _normalised_name(name)
    squeezed = wanted.replace(" ", "")
    for reserved in settings.KIT_RESERVED_CLIENT_NAMES:
        mark = _normalised_name(reserved)
        if wanted == mark or squeezed == mark.replace(" ", "") or wanted.startswith(mark + " "):
            return (
                f"client_name {name[:80]!r} is reserved for {reserved}'s own clients; "
                "register under your application's own name."
            )
    return None


def redirect_uri_problem(uri: object) -> str | None:
    """Why ``uri`` may not be a redirect URI of a self-registered client, or None."""
    if not isinstance(uri, str):
        return None  # DOT's own validation names the type problem
    parts = urlsplit(uri)
    if parts.scheme == "http" and (parts.hostname or "") not in LOOPBACK_HOSTS:
        return (
            f"{uri[:200]!r}: http redirect URIs are allowed only on loopback (127.0.0.1, "
            "[::1], localhost); use https."
        )
    return None


@dataclass(frozen=True)
class MetadataProblem:
    #: The RFC 7591 error code.
    error: str
    description: str


def client_metadata_problem(metadata: object) -> MetadataProblem | None:
    """The first reason client metadata (RFC 7591) is refused, or None to let DOT check it."""
    if not isinstance(metadata, dict):
        return None
    uris = metadata.get("redirect_uris")
    for uri in uris if isinstance(uris, list) else []:
        problem = redirect_uri_problem(uri)
        if problem:
            return MetadataProblem("invalid_redirect_uri", problem)
    problem = reserved_name_problem(metadata.get("client_name"))
    return MetadataProblem("invalid_client_metadata", problem) if problem else None


def is_self_registered(application) -> bool:
    Application = get_application_model()
    return application.registration_source != Application.RegistrationSource.MANUAL


@dataclass(frozen=True)
class ConsentClient:
    """What the consent page says about the client asking for access."""

    name: str
    verified: bool
    self_registered: bool
    redirect_host: str
    redirect_is_loopback: bool


def consent_client(application, redirect_uri: str) -> ConsentClient:
    self_registered = is_self_registered(application)
    verified = (not self_registered) or OAuthClientVerification.objects.filter(
        application=application
    ).exists()
    host = (urlsplit(redirect_uri or "").hostname or "").lower()
    return ConsentClient(
        name=application.name or application.client_id,
        verified=verified,
        self_registered=self_registered,
        redirect_host=host or "(no redirect address)",
        redirect_is_loopback=host in LOOPBACK_HOSTS,
    )


def client_verify(*, application, user) -> bool:
    """Mark a client verified by ``user``; False if it already was."""
    _, created = OAuthClientVerification.objects.get_or_create(
        application=application, defaults={"verified_by": user}
    )
    return created


def client_unverify(*, application) -> bool:
    deleted, _ = OAuthClientVerification.objects.filter(application=application).delete()
    return bool(deleted)


def operator_client(name: str):
    """The operator-created client called ``name``, created if there is none.

    Only clients an operator created (registration source ``manual``, no owner) qualify: a
    self-registered client of the same name never receives operator-issued tokens.
    """
    Application = get_application_model()
    application = (
        Application.objects.filter(
            name=name, user=None, registration_source=Application.RegistrationSource.MANUAL
        )
        .order_by("pk")
        .first()
    )
    if application is None:
        application = Application.objects.create(
            name=name,
            client_type=Application.CLIENT_PUBLIC,
            authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
            redirect_uris="",
            user=None,
            registration_source=Application.RegistrationSource.MANUAL,
        )
    return application
