"""Company domain resolution: an email, URL or host to its registrable domain.

``founder@acme.dev``, ``https://www.acme.dev/careers``, ``ACME.dev.`` and ``jobs.acme.dev``
all resolve to ``acme.dev``; ``shop.acme.co.uk`` to ``acme.co.uk``. IDNs resolve to
punycode. The Public Suffix List comes from the snapshot bundled with tldextract and is
never fetched at run time.

Private suffixes of the list count as suffixes (``acme.github.io`` is a company of its own,
not a page of ``github.io``), so bare hosting suffixes such as ``github.io`` are rejected
like ``co.uk``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

import idna
import tldextract

from prospect_memory.notes.errors import InvalidDomain

MAX_INPUT_CHARS = 2048
MAX_HOST_CHARS = 253
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)

# No URLs to fetch and no cache directory: the bundled snapshot only.
_extract = tldextract.TLDExtract(
    suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
)


@dataclass(frozen=True)
class ResolvedDomain:
    domain: str
    #: The email address the input named, if it was one (lower case).
    address: str | None = None


def _reject(value: str, reason: str) -> InvalidDomain:
    shown = value if len(value) <= 200 else value[:200] + "…"
    return InvalidDomain(
        f"{shown!r} {reason}. Pass a company email, website URL or domain such as 'acme.com'.",
        details={"input": shown, "reason": reason},
    )


def _split_url(value: str, original: str, what: str) -> str:
    try:
        parts = urlsplit(value)
        host = parts.hostname or ""
    except ValueError:
        raise _reject(original, f"is not a valid {what}") from None
    try:
        parts.port  # noqa: B018  (raises on a port outside 0-65535 or not a number)
    except ValueError:
        raise _reject(original, "has an invalid port") from None
    return host


def _host_of(value: str) -> tuple[str, str | None]:
    """Split the input into a host and, for an email, the address."""
    if value[:7].lower() == "mailto:":
        value = value[7:]
    if _SCHEME.match(value):
        host = _split_url(value, value, "URL")
        if not host:
            raise _reject(value, "is a URL without a host")
        return host, None
    if "@" in value and "/" not in value:
        local, _, host = value.rpartition("@")
        if not local or not host or any(c.isspace() for c in value):
            raise _reject(value, "is not a valid email address")
        return host, f"{local}@{host}".lower()
    # A bare host, perhaps with a port or path ("acme.dev:443/careers").
    host = _split_url(f"//{value}", value, "host")
    if not host:
        raise _reject(value, "has no host")
    return host, None


def _is_ip(text: str) -> bool:
    # Only dotted digits (IPv4) or text with a colon (IPv6) can be one: a name answers
    # without the parse, which costs more than the rest of resolving a known host.
    if ":" not in text and not text.replace(".", "").isdigit():
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def resolve_domain(value: object) -> ResolvedDomain:
    """Resolve ``value`` or raise :class:`InvalidDomain` saying why it has no domain."""
    if not isinstance(value, str):
        raise InvalidDomain(
            "domain must be a string: a company email, website URL or domain such as 'acme.com'.",
            details={"reason": "not a string"},
        )
    value = value.strip()
    if not value:
        raise _reject(value, "is empty")
    if len(value) > MAX_INPUT_CHARS:
        raise _reject(value, f"is longer than {MAX_INPUT_CHARS} characters")
    if _is_ip(value.strip("[]")):
        raise _reject(value, "is an IP address, which has no registrable domain")
    host, address = _host_of(value)
    found = _registrable(host.strip("[]").rstrip("."))
    if isinstance(found, str):
        raise _reject(value, found)
    registrable, ascii_host = found
    if address is not None:
        address = f"{address.rpartition('@')[0]}@{ascii_host}"
    return ResolvedDomain(domain=registrable, address=address)


#: Agents name the same companies again and again (every recall and save names one): what
#: a host comes to, the same for every account, is kept for the next time. Only the host:
#: never an email address's local part or a URL's path, which name people and pages.
@lru_cache(maxsize=4096)
def _registrable(host: str) -> tuple[str, str] | str:
    """The registrable domain and the ASCII form of ``host``, or why it has none."""
    if not host:
        return "has no host"
    if _is_ip(host):
        return "is an IP address, which has no registrable domain"
    if any(c.isspace() or c in "\\/?#%@:\x00" for c in host):
        return "contains characters a domain cannot have"
    if any(not label for label in host.split(".")):
        return "has an empty label (a leading dot or two dots in a row)"
    if host.isascii():
        ascii_host = host.lower()
    else:
        try:
            ascii_host = idna.encode(host, uts46=True).decode("ascii").lower()
        except (idna.IDNAError, UnicodeError, ValueError):
            return "is not a valid internationalised domain name"
    if len(ascii_host) > MAX_HOST_CHARS:
        return f"has a host longer than {MAX_HOST_CHARS} characters"
    labels = ascii_host.split(".")
    for label in labels:
        if len(label) > 63:
            return "has a label longer than 63 characters"
        if not _LABEL.match(label):
            return f"has the label {label!r}; labels are letters, digits and inner hyphens"
    if len(labels) == 1:
        return "is a single-label host (like 'localhost'), not a public domain"
    parts = _extract(ascii_host)
    registrable = parts.top_domain_under_public_suffix
    if not registrable:
        if not parts.suffix:
            return "does not end in a known public suffix"
        return "is a public suffix, not a company domain"
    return registrable, ascii_host
