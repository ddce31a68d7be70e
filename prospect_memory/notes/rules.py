"""The rules of prospect memory (SPEC section 4), each defined once.

- What a title, body, source list and date may be: each ``clean_*`` function returns the
  stored form or raises a :class:`KitError` naming the field and what to do;
  :func:`clean_note_input` checks every field and reports all the problems at once, so an
  agent fixes its call in one round trip.
- When a note or a dossier is stale, when compaction is suggested, when an agent must stop.

Every number comes from ``notes.conf``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

from django.db.models import Q
from django.utils import timezone

from outreach.characters import cut
from outreach.models import Reply
from outreach.selectors import Relationship
from outreach.validation import FieldError, FieldProblems
from prospect_memory.core import integrity
from prospect_memory.core.embeddings import input_text
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.errors import BodyTooLarge
from prospect_memory.notes.records import NoteInput, StopReason

_DEFAULT_PORTS = {"http": 80, "https": 443}

# The newest active notes of a company, as recall's hand-written statements read them
# (``n`` a note, ``d`` its dossier, joined ``ON`` ``IN_ITS_DOSSIER``): the notes of one
# company of the account, newest observed first, then newest stored, then by id.
IN_ITS_DOSSIER = "d.id = n.dossier_id AND d.account_id = n.account_id"
ACTIVE_IN_DOSSIER = "n.account_id = %(account)s AND d.domain = %(domain)s AND n.status = %(active)s"
NEWEST_FIRST = "n.observed_at DESC, n.created_at DESC, n.id"

# The columns a note is read with for a view or an answer, by recall's and the nearest
# notes' statements (``n`` the note, ``u`` the user of the member who wrote it, ``a`` the
# client it came through), and where each is in a row: whoever reads a row takes its
# parts by these places.
(NOTE_ID, NOTE_ACCOUNT, NOTE_TITLE, NOTE_BODY, NOTE_SOURCES, NOTE_OBSERVED, NOTE_CREATED,
 NOTE_MEMBER, NOTE_CLIENT, NOTE_INTEGRITY) = range(10)  # fmt: skip
NOTE_COLUMN_COUNT = NOTE_INTEGRITY + 1


def note_columns(*, created_at: str, username: str) -> str:
    """The select list of :data:`NOTE_ID` to :data:`NOTE_INTEGRITY`, in order: the time it
    was stored as ``created_at`` writes it, the writer's name from ``u.<username>``."""
    return (
        "n.id::text, n.account_id, n.title_ciphertext, n.body_ciphertext, n.source_urls, "
        f"n.observed_at, {created_at}, u.{username}, a.name, n.integrity_ciphertext"
    )


def utc_today() -> date:
    return timezone.now().date()


def clean_body(body: object, *, field: str = "body") -> str:
    if not isinstance(body, str):
        raise FieldError(field, f"{field} must be a string of markdown text")
    if not body.strip():
        raise FieldError(field, f"{field} is required: write the finding in markdown")
    _refuse_invisible(body, field)
    size = len(body.encode("utf-8"))
    limit = notes_settings.BODY_MAX_BYTES
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
    _refuse_invisible(title, "title")
    # Cut between two characters a reader sees (an emoji kept whole or left out).
    return cut(" ".join(title.split()), notes_settings.TITLE_MAX_CHARS, mark="").strip()


def _refuse_invisible(text: str, field: str) -> None:
    """Invisible and control characters are refused, never stored (SPEC 15)."""
    problem = integrity.invisible_problem(text, field)
    if problem:
        raise FieldError(field, problem)


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
    # Refused characters first: a lone surrogate (which JSON can spell) has no UTF-8 form
    # to measure.
    _refuse_invisible(url, field)  # names each control or invisible character's position
    limit = notes_settings.SOURCE_URL_MAX_BYTES
    if len(url.encode("utf-8")) >= limit:
        raise FieldError(field, f"{field} is {limit:,} bytes or longer; URLs must be under that")
    if any(c.isspace() for c in url):
        raise FieldError(field, f"{field} {shown!r} contains spaces; encode them as %20")
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
    low, high = notes_settings.SOURCE_URLS_MIN, notes_settings.SOURCE_URLS_MAX
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
    latest = utc_today() + timedelta(days=notes_settings.OBSERVED_AT_MAX_FUTURE_DAYS)
    if observed > latest:
        raise FieldError(
            "observed_at",
            f"observed_at {observed.isoformat()} is in the future; use the date the finding "
            f"was true (at the latest {latest.isoformat()})",
        )
    return observed


def clean_note_input(
    *, title: object, body: object, source_urls: object, observed_at: object
) -> NoteInput:
    return NoteInput(
        **clean_fields(
            ("body", clean_body, body),
            ("title", clean_title, title),
            ("source_urls", clean_source_urls, source_urls),
            ("observed_at", clean_observed_at, observed_at),
        )
    )


def note_flags(*, title: str, body: str, source_urls: list[str]) -> list[integrity.Flag]:
    """What the integrity check finds in a note about to be stored (SPEC 15)."""
    return integrity.note_flags(title=title, body=body, source_urls=source_urls)


def clean_note_ids(note_ids: object) -> list[uuid.UUID] | None:
    """The notes a compaction merges: None for all active notes, else distinct note ids."""
    if note_ids is None:
        return None
    if not isinstance(note_ids, list | tuple):
        raise FieldError("note_ids", "note_ids must be a list of note ids (or left out)")
    ids: list[uuid.UUID] = []
    for index, value in enumerate(note_ids):
        try:
            ids.append(uuid.UUID(str(value)) if isinstance(value, str | uuid.UUID) else None)
        except ValueError:
            ids.append(None)
        if ids[-1] is None:
            raise FieldError(f"note_ids[{index}]", f"note_ids[{index}] is not a note id")
    if len(set(ids)) != len(ids):
        raise FieldError("note_ids", "note_ids lists a note more than once")
    return ids


def clean_expected_count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldError(
            "expected_note_count",
            "expected_note_count must be the whole number note_count from the recall the "
            "merge was built on",
        )
    return value


def clean_fields(*checks: tuple[str, Callable[[object], object], object]) -> dict:
    """Run ``(name, clean, value)`` checks; every problem reported at once, or the values."""
    problems = FieldProblems()
    cleaned = {name: problems.check(clean, value) for name, clean, value in checks}
    problems.raise_if_any()
    return cleaned


def embedding_input(title: str, body: str) -> str:
    """A note's embedding input: title and body, cut to EMBEDDING_INPUT_MAX_BYTES."""
    return input_text(f"{title}\n\n{body}" if title else body)


# --- freshness, compaction, stop ----------------------------------------------------------


def stale_cutoff(today: date | None = None) -> date:
    """Notes observed before this date are stale (observed more than STALE_AFTER_DAYS ago)."""
    return (today or utc_today()) - timedelta(days=notes_settings.STALE_AFTER_DAYS)


def is_stale(observed_at: date, today: date | None = None) -> bool:
    return observed_at < stale_cutoff(today)


def freshness(observed_at: date, *, today: date, cutoff: date) -> tuple[bool, int]:
    """A note's ``stale`` and ``age_days`` on ``today``, whose :func:`stale_cutoff` is
    ``cutoff`` (looked up once by a reader of many notes)."""
    return observed_at < cutoff, (today - observed_at).days


def dossier_stale(newest_observed_at: date | None, today: date | None = None) -> bool:
    """A dossier is stale when its newest note is stale, or it has no notes at all."""
    return newest_observed_at is None or is_stale(newest_observed_at, today)


def stale_dossiers(newest: str, today: date | None = None) -> Q:
    """:func:`dossier_stale` as a filter on a queryset annotated with ``newest``."""
    return Q(**{f"{newest}__isnull": True}) | Q(**{f"{newest}__lt": stale_cutoff(today)})


def compaction_suggested(note_count: int) -> bool:
    return note_count > notes_settings.COMPACTION_SUGGESTED_ABOVE


def compaction_suggested_dossiers() -> Q:
    """:func:`compaction_suggested` as a filter on dossiers."""
    return Q(active_note_count__gt=notes_settings.COMPACTION_SUGGESTED_ABOVE)


#: A last reply after which Kit must not write to the company again. (An unsubscribe stops
#: it whenever it came: see ``stop_reasons``.)
STOP_SENTIMENTS = (Reply.Sentiment.NEGATIVE, Reply.Sentiment.BOUNCE)


def stop_reasons(relationship: Relationship, domain: str) -> list[StopReason]:
    """Why an agent must not contact the company at ``domain``: none, or each reason."""
    reasons = []
    if relationship.suppressed:
        entries = ", ".join(f"{m.kind} {m.value}" for m in relationship.suppression_matches)
        reasons.append(
            StopReason(
                "suppressed",
                f"{domain} is on this account's suppression list ({entries}); do not contact it.",
            )
        )
    # An unsubscribe reply is an opt-out in law (CAN-SPAM, GDPR art. 21): it stands whatever
    # came after it (an out-of-office reply does not lift it), suppression recorded or not.
    opt_out = relationship.unsubscribe
    if opt_out:
        reasons.append(
            StopReason(
                f"last_reply_{Reply.Sentiment.UNSUBSCRIBE}",
                f"{domain} asked to unsubscribe ({opt_out.received_at.date().isoformat()}, "
                f"campaign '{opt_out.campaign.name}'); that opt-out stands: do not write to it "
                "again.",
            )
        )
    last = relationship.last_reply
    if last and last.sentiment in STOP_SENTIMENTS:
        reasons.append(
            StopReason(
                f"last_reply_{last.sentiment}",
                f"The last reply from {domain} ({last.received_at.date().isoformat()}, campaign "
                f"'{last.campaign.name}') was {last.sentiment}; do not write to it again.",
            )
        )
    return reasons
