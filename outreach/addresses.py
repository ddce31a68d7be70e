"""Who is on the other end of a request: the client address and the sign-in name.

One definition for everything that counts per address (sign-in throttling, the client
registration limit), so a proxy in front of Kit is configured once (``KIT_PROXY_COUNT``).
"""

from __future__ import annotations

import ipaddress
import unicodedata

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's IP address.

    With ``KIT_PROXY_COUNT`` = N trusted proxies in front of Kit, each appending the address
    it received from to ``X-Forwarded-For``, the client is the N-th entry from the right;
    entries further left were written by the client and are never trusted.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.KIT_PROXY_COUNT
    if proxies:
        forwarded = [
            part.strip()
            for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
            if part.strip()
        ]
        if len(forwarded) >= proxies:
            return forwarded[-proxies][:64]
    return remote[:64]


def address_bucket(address: str) -> str:
    """What per-address limits count: an IPv4 address, or the /64 network of an IPv6 one
    (a single host is usually given a whole /64, so counting its addresses would not limit
    it at all)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)


def signin_address(request: HttpRequest) -> str | None:
    """The address django-axes counts failed sign-ins against (None when unknown)."""
    return address_bucket(client_address(request)) or None


def signin_username(request: HttpRequest, credentials: dict | None = None) -> str:
    """The user name a sign-in attempt names, as throttling counts it (case and spacing
    ignored, so ``Demo@Kit.test `` and ``demo@kit.test`` share one count)."""
    source = credentials if credentials else getattr(request, "POST", {})
    name = source.get("username") or ""
    return unicodedata.normalize("NFKC", str(name)).strip().casefold()[:254]
