"""The note rules of SPEC section 4: what a title, body, source list and date may be.

Each ``clean_*`` function returns the stored form or raises a :class:`KitError` naming the
field and what to do. :func:`clean_note_input` checks every field and reports all the
problems at once, so an agent fixes its call in one round trip.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

from django.utils import timezone

from prospect_memory.conf import app_settings
from prospect_memory.errors import BodyTooLarge, ValidationFailed

_DEFAULT_PORTS = {"http": 80, "https": 443}


class FieldError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class NoteInput:
    title: str
    body: str
    source_urls: list[str]
    observed_at: date


def utc_today() -> date:
    return timezone.now().date()


def clean_body(body: object, *, field: str = "body") -> str:
    if not isinstance(body, str):
        raise FieldError(field, f"{field} must be a string of markdown text")
    if not body.strip():
        raise FieldError(field, f"{field} is required: write the finding in markdown")
    size = len(body.encode("utf-8"))
    limit = app_settings.BODY_MAX_BYTES
    if size > limit:
        raise BodyTooLarge(
            f"{field} is {size:,} bytes; the limit is {limit:,} bytes (UTF-8). Nothing was "
            "cut or saved: split the finding into several notes or shorten it.",
            details={"field": field, "size_bytes": size, "limit_bytes": limit},
        )
    return body


def clean_title(title: object) -> str:
    """One line: whitespace runs (newlines included) become one space, then cut."""
    if title is None:
        return ""
    if not isinstance(title, str):
        raise FieldError("title", "title must be a string (or left out)")
    return " ".join(title.split())[: app_settings.TITLE_MAX_CHARS].strip()


def normalise_url(url: str) -> str:
    """Scheme and host lower-cased, default port and fragment dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    if parts.username or parts.password:
        userinfo = parts.username or ""
        if parts.password:
            userinfo += f":{parts.password}"
        netloc = f"{userinfo}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _check_url(index: int, url: object) -> str:
    field = f"source_urls[{index}]"
    if not isinstance(url, str):
        raise FieldError(field, f"{field} must be a string URL, got {type(url).__name__}")
    url = url.strip()
    shown = url if len(url) <= 100 else url[:100] + "…"
    limit = app_settings.SOURCE_URL_MAX_BYTES
    if len(url.encode("utf-8")) >= limit:
        raise FieldError(field, f"{field} is {limit:,} bytes or longer; URLs must be under that")
    if any(ord(c) < 33 or c == "\x7f" for c in url):
        raise FieldError(field, f"{field} {shown!r} contains spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError:
        raise FieldError(field, f"{field} {shown!r} is not a valid URL") from None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.hostname:
        raise FieldError(
            field, f"{field} {shown!r} must be an absolute http:// or https:// URL with a host"
        )
    return url


def clean_source_urls(urls: object) -> list[str]:
    low, high = app_settings.SOURCE_URLS_MIN, app_settings.SOURCE_URLS_MAX
    if urls is None:
        raise FieldError("source_urls", f"source_urls is required: {low} to {high} URLs")
    if not isinstance(urls, list | tuple):
        raise FieldError("source_urls", "source_urls must be a list of URLs")
    if not low <= len(urls) <= high:
        raise FieldError("source_urls", f"source_urls has {len(urls)} URLs; give {low} to {high}")
    cleaned: list[str] = []
    seen: dict[str, int] = {}
    for index, url in enumerate(urls):
        url = _check_url(index, url)
        key = normalise_url(url)
        if key in seen:
            raise FieldError(
                f"source_urls[{index}]",
                f"source_urls[{index}] repeats source_urls[{seen[key]}]; list each source once",
            )
        seen[key] = index
        cleaned.append(url)
    return cleaned


def clean_observed_at(value: object) -> date:
    example = utc_today().isoformat()
    if value is None or value == "":
        raise FieldError(
            "observed_at", f"observed_at is required: the date the finding was true, e.g. {example}"
        )
    if isinstance(value, datetime):
        observed = value.date()
    elif isinstance(value, date):
        observed = value
    elif isinstance(value, str):
        try:
            observed = date.fromisoformat(value.strip()[:10])
            if len(value.strip()) > 10:
                datetime.fromisoformat(value.strip())
        except ValueError:
            raise FieldError(
                "observed_at", f"observed_at {value[:40]!r} is not a date like {example}"
            ) from None
    else:
        raise FieldError("observed_at", f"observed_at must be a date string like {example}")
    latest = utc_today() + timedelta(days=app_settings.OBSERVED_AT_MAX_FUTURE_DAYS)
    if observed > latest:
        raise FieldError(
            "observed_at",
            f"observed_at {observed.isoformat()} is in the future; use the date the finding "
            f"was true (at the latest {latest.isoformat()})",
        )
    return observed


def raise_field_errors(errors: list[FieldError]) -> None:
    if not errors:
        return
    first = errors[0].message
    more = f" (and {len(errors) - 1} more problem(s), see details)" if len(errors) > 1 else ""
    fields: dict[str, list[str]] = {}
    for error in errors:
        fields.setdefault(error.field, []).append(error.message)
    raise ValidationFailed(f"{first}{more}.", details={"fields": fields})


def clean_note_input(
    *, title: object, body: object, source_urls: object, observed_at: object
) -> NoteInput:
    errors: list[FieldError] = []
    cleaned: dict[str, object] = {}
    for name, clean, value in (
        ("body", clean_body, body),
        ("title", clean_title, title),
        ("source_urls", clean_source_urls, source_urls),
        ("observed_at", clean_observed_at, observed_at),
    ):
        try:
            cleaned[name] = clean(value)
        except FieldError as error:
            errors.append(error)
    raise_field_errors(errors)
    return NoteInput(**cleaned)


def embedding_input(title: str, body: str) -> str:
    """Title and body, cut to the first EMBEDDING_INPUT_MAX_BYTES on a character boundary."""
    text = f"{title}\n\n{body}" if title else body
    raw = text.encode("utf-8")[: app_settings.EMBEDDING_INPUT_MAX_BYTES]
    return raw.decode("utf-8", errors="ignore")


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
