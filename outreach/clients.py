"""OAuth clients: what a self-registered client may claim, and how far Kit trusts one.

Anyone may register a client (RFC 7591: MCP clients register themselves), so a client's
name is only what it calls itself. Kit therefore

- allows plain ``http`` redirect URIs on loopback only (RFC 8252 native clients), on
  registration and on every later update (RFC 7592), and no whitespace or control
  characters in them (the toolkit stores redirect URIs space-separated, so one URI with a
  space inside would become two);
- allows the authorization code and refresh token grants only: a client can get a token
  only through a member's consent;
- refuses names reserved for Kit itself (``KIT_RESERVED_CLIENT_NAMES``), look-alikes
  included (Unicode TR39 confusables, symbols and invisible characters ignored);
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

from outreach.characters import invisible_problem, is_refused, readable
from outreach.models import OAuthClientVerification
from outreach.text import latin_lookalike

LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}
GRANT_TYPES = ("authorization_code", "refresh_token")


def _normalised_name(name: str) -> str:
    """A name's skeleton: look-alike letters mapped to Latin, case, width and accents
    folded, symbols (``™``) and invisible characters dropped, other punctuation a space."""
    visible = "".join(
        c
        for c in name
        if (unicodedata.category(c)[0] not in "SC" or c.isspace()) and not is_refused(c)
    )
    latin = "".join(latin_lookalike(c) for c in visible)
    folded = unicodedata.normalize("NFKD", latin).casefold()
    letters = "".join(latin_lookalike(c) for c in folded if not unicodedata.combining(c))
    return " ".join(re.sub(r"[\W_]+", " ", letters).split())


#: A self-registered client's name is a label, not a message: every note and entry it
#: writes carries it back to later agents (``attribution.oauth_client``).
CLIENT_NAME_MAX_CHARS = 60
CLIENT_NAME_MAX_WORDS = 6


def reserved_name_problem(name: object) -> str | None:
    """Why a self-registered client may not call itself ``name``, or None."""
    if not isinstance(name, str) or not name.strip():
        return None
    hidden = invisible_problem(name, "client_name")
    if hidden:
        # What the memories refuse (bidi overrides, zero-width, Hangul fillers, variation
        # selectors...) can make a name display as something else ("\u202etiK" shows as
        # "Kit", "Kit\u3164" as "Kit"), or carry bytes no one sees.
        return f"client_name {name[:80]!r}: {hidden.removeprefix('client_name ')}."
    if (
        len(name) > CLIENT_NAME_MAX_CHARS
        or len(name.split()) > CLIENT_NAME_MAX_WORDS
        or re.search(r"@|://|[.:;!?]\s", name)
    ):
        return (
            f"client_name {name[:80]!r} reads as a message, not a name: give your "
            f"application's name, at most {CLIENT_NAME_MAX_CHARS} characters and "
            f"{CLIENT_NAME_MAX_WORDS} words, without addresses or sentences."
        )
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
        return "redirect URIs must be strings"
    shown = repr(uri[:200])
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in uri):
        return f"{shown}: a redirect URI may not contain spaces or control characters."
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
    except ValueError:
        return f"{shown} is not a valid URL."
    if not host.isascii():
        return (
            f"{shown}: write the host in its ASCII (punycode, xn--) form, as the consent page "
            "shows it."
        )
    if "@" in parts.netloc or "\\" in uri:
        # Python and browsers disagree on the host of "http://evil\\@localhost/".
        return f"{shown}: a redirect URI may not carry a user name or a backslash."
    if parts.scheme == "http" and host not in LOOPBACK_HOSTS:
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


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    return False


def client_metadata_problem(metadata: object) -> MetadataProblem | None:
    """The first reason client metadata (RFC 7591) is refused, or None to let DOT check it."""
    if not isinstance(metadata, dict):
        return None
    if _has_nul(metadata):
        return MetadataProblem("invalid_client_metadata", "metadata may not contain NUL bytes.")
    uris = metadata.get("redirect_uris")
    if uris is not None and not isinstance(uris, list):
        return MetadataProblem("invalid_redirect_uri", "redirect_uris must be a list of URLs.")
    for uri in uris or []:
        problem = redirect_uri_problem(uri)
        if problem:
            return MetadataProblem("invalid_redirect_uri", problem)
    grants = metadata.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= set(GRANT_TYPES) or not grants:
        return MetadataProblem(
            "invalid_client_metadata",
            f"grant_types may only be {' and '.join(GRANT_TYPES)}: Kit issues tokens only "
            "after a member's consent.",
        )
    name = metadata.get("client_name", "")
    if not isinstance(name, str):
        return MetadataProblem("invalid_client_metadata", "client_name must be a string.")
    problem = reserved_name_problem(name)
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
    try:
        host = (urlsplit(redirect_uri or "").hostname or "").lower()
    except ValueError:
        host = ""
    return ConsentClient(
        name=readable(application.name or application.client_id),  # as readers receive text
        verified=verified,
        self_registered=self_registered,
        redirect_host=displayed_host(host) or "(no redirect address)",
        redirect_is_loopback=host in LOOPBACK_HOSTS,
    )


def displayed_host(host: str) -> str:
    """A host as the consent page shows it: internationalised names in their ASCII
    (punycode) form, so "claude.ai" spelled with a Cyrillic "c" cannot pass for claude.ai."""
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host.encode("ascii", "backslashreplace").decode("ascii")


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
