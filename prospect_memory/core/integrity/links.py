"""Links built to carry data out (SPEC 15.2): an image that would load an address with data
in it, a placeholder to fill, a long encoded value, a parameter named for secrets."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, unquote, urlsplit

from prospect_memory.core.integrity.flags import Flag, quote

_LINK = re.compile(
    r"(!?)\[[^\]\n]{0,500}\]\(\s*<?((?:https?:)?//[^)\s]+)"  # markdown link or image
    r"|((?:https?:)?//[^\s<>\"')\]]+)"  # a bare address
    r"|(?:src|href)\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)",  # an HTML attribute
    re.I,
)
_PLACEHOLDER = re.compile(
    r"\{\{?[^{}]{1,60}\}\}?|\$\{[^}]{1,60}\}|\[\[[^\]]{1,60}\]\]|%7B[^%]{1,60}%7D|<[A-Z_]{3,}>"
    r"|%3C[A-Z_]{3,}%3E|__[A-Z_]{3,}__|=(?:[A-Z]+_){1,}[A-Z]+\b|=[A-ZÄÖÜ]{8,}(?:&|$)"
    # Capitals named to be filled in: =<ICP>, =[ICP], =$ICP, ICP_GOES_HERE, =%5BICP%5D.
    r"|=(?:\[|%5B)[A-Z][A-Z_]{1,40}(?:\]|%5D)|=\$[A-Z][A-Z_]{1,40}\b"
    r"|\b[A-Z][A-Z_]{1,40}_(?:GOES_HERE|HERE|PLACEHOLDER)\b"
)
_ENCODED = re.compile(r"^[A-Za-z0-9+/_=-]{40,}$|^(?:[0-9a-fA-F]{2}){20,}$")


def _looks_encoded(value: str) -> bool:
    """Base64 or hex of some length: mixed case and digits, or hex; not a slug of words."""
    if not _ENCODED.match(value):
        return False
    if re.fullmatch(r"(?:[0-9a-fA-F]{2})+", value):
        return True
    has = [any(test(c) for c in value) for test in (str.isupper, str.islower, str.isdigit)]
    return all(has) and value.count("-") <= 2 and len(set(value)) > 12


#: Parameters named for what an attacker wants carried out.
_DATA_PARAMETERS = {
    "data",
    "payload",
    "content",
    "conversation",
    "chat",
    "history",
    "context",
    "memory",
    "prompt",
    "system_prompt",
    "secret",
    "secrets",
    "api_key",
    "apikey",
    "key",
    "token",
    "password",
    "pwd",
    "passwd",
    "creds",
    "credentials",
    "cookie",
    "cookies",
    "leak",
    "exfil",
    "dump",
    "notes",
    "msg",
    "message",
    "body",
    "text",
    "info",
    "summary",
    "session",
    "d",
}
#: Tracking parameters carry long random values in ordinary links.
_TRACKING = re.compile(
    r"^(?:utm_\w+|gclid|gbraid|wbraid|dclid|fbclid|msclkid|yclid|igshid|mc_[ce]id|_hs\w+|"
    r"hsctatracking|trk\w*|refid|trackingid|si|s_kwcid|ef_id|_ga|_gl|li_fat_id|oly_\w+|rb_clickid|"
    r"vero_\w+|mkt_tok|spm|sc_\w+|cid|campaign\w*|ref|source|sessionid|sid"
    # signatures of presigned links (S3, Google Cloud, Azure SAS, CloudFront): not data
    r"|x-amz-[\w-]+|x-goog-[\w-]+|signature|sig|se|sp|sv|sr|st|sk\w*|expires|key-pair-id|policy)$",
    re.IGNORECASE,
)


def _link_flags(url: str, image: bool) -> str | None:
    """The kind of data this link carries, or None."""
    if _PLACEHOLDER.search(url) or _PLACEHOLDER.search(unquote(url)):
        return "placeholder"
    if image and url.rstrip(">").endswith("="):
        return "image_beacon"  # a parameter left for what comes after it to fill
    try:
        parts = urlsplit(url if "://" in url else "https:" + url)
    except ValueError:
        return None
    query = parse_qsl(parts.query, keep_blank_values=True)
    for name, value in query:
        if _TRACKING.match(name):
            continue
        compact = value.replace(" ", "")
        if _looks_encoded(compact):
            return "image_beacon" if image else "encoded_data"
        if name.lower() in _DATA_PARAMETERS and len(value) >= 24 and not value.isdigit():
            return "image_beacon" if image else "data_parameter"
    # A long id in a path is a document, a commit or a file (Google Docs, GitHub): only an
    # image that would load it on sight is a beacon.
    segments = [s for s in parts.path.split("/") if s]
    if image and any(_looks_encoded(s) for s in segments):
        return "image_beacon"
    if image and query and len(parts.query) >= 24:
        return "image_beacon"
    return None


def data_links(text: str, field: str) -> Iterator[Flag]:
    if "//" not in text:
        return
    for match in _LINK.finditer(text):
        image = match.group(1) == "!"
        url = match.group(2) or match.group(3) or match.group(4)
        start = (
            match.start(2)
            if match.group(2)
            else match.start(3)
            if match.group(3)
            else match.start(4)
        )
        kind = _link_flags(url, image)
        if kind:
            yield Flag(kind, field, match.start() if image else start, start + len(url))


def url_flags(url: str, field: str) -> list[Flag]:
    """Flags of one source URL (it is a link; only what it carries is looked at)."""
    kind = _link_flags(url, image=False)
    return [Flag(kind, field, 0, len(url), text=quote(url))] if kind else []
