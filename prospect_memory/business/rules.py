"""The rules of business memory (SPEC section 12), each defined once.

What a key, value, category, confidence, source, TTL, strategy and expected version may be
(every problem of a call reported at once, by field), and what each merge strategy makes of
an existing value. Every number comes from ``business.conf``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from outreach.jsonbody import depth
from outreach.validation import FieldProblems
from prospect_memory.business.conf import business_settings
from prospect_memory.business.errors import MergeTypeMismatch, ValidationFailed, ValueTooLarge
from prospect_memory.business.models import KEY_HINT, KEY_PATTERN, Category, Layer, Strategy
from prospect_memory.business.records import Source
from prospect_memory.core import integrity
from prospect_memory.core.embeddings import input_text

_KEY = re.compile(KEY_PATTERN, re.ASCII)
_SOURCE_IDS = integrity.SOURCE_IDS
INT64 = (-(2**63), 2**63 - 1)
#: The earliest extraction time taken (anything earlier is a mistake, and times before
#: year 1 in UTC cannot even be stored).
EARLIEST_EXTRACTION = datetime(1970, 1, 1, tzinfo=UTC)
#: What a store may name as its strategy (the others say how a version came about).
STORE_STRATEGIES = (
    Strategy.OVERWRITE,
    Strategy.APPEND,
    Strategy.INCREMENT,
    Strategy.MAX,
    Strategy.MIN,
)
NUMERIC_STRATEGIES = (Strategy.INCREMENT, Strategy.MAX, Strategy.MIN)


class _Unset:
    """An argument that was left out (as opposed to given as null)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()

READ_LAYERS = ("merged", Layer.ACCOUNT, Layer.MEMBER)


def _whole_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return (_whole_number(value) or isinstance(value, float)) and not (
        isinstance(value, float) and not math.isfinite(value)
    )


def json_type(value: object) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if _whole_number(value) or isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


# --- fields ------------------------------------------------------------------------------


def clean_key(key: object, problems: FieldProblems, field: str = "key") -> str:
    limit = business_settings.KEY_MAX_CHARS
    rule = f"1 to {limit} characters of {KEY_HINT}"
    if not isinstance(key, str):
        problems.add(field, f"{field} must be a string: {rule}")
        return ""
    # Only ASCII is lower-cased: some other letters (the Kelvin sign) lower-case to ASCII.
    cleaned = key.lower() if key.isascii() else key
    if not cleaned or len(cleaned) > limit or not _KEY.fullmatch(cleaned):
        problems.add(field, f"{field} {key[:40]!r} is not a key: {rule}")
    return cleaned


def encode_value(value: Any, field: str = "value") -> str:
    """The stored form of a value: compact JSON, within the size limit, or a refusal."""
    limit = business_settings.VALUE_MAX_BYTES
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        size = len(text.encode("utf-8"))
    except ValueError:
        problem = f"{field} contains NaN or Infinity, which JSON cannot carry; send finite numbers"
        raise ValidationFailed(f"{problem}.", details={"fields": {field: [problem]}}) from None
    except UnicodeEncodeError:
        problem = f"{field} contains an invalid Unicode character (a lone surrogate)"
        raise ValidationFailed(f"{problem}.", details={"fields": {field: [problem]}}) from None
    if size > limit:
        raise ValueTooLarge(
            f"{field} is {size:,} bytes as compact JSON; the limit is {limit:,}. Nothing was "
            "cut or stored: keep the entry smaller or split it into several keys.",
            details={"field": field, "size_bytes": size, "limit_bytes": limit},
        )
    return text


#: Most strings of one value reported for invisible characters (the rest are counted).
_INVISIBLE_REPORTED = 20


def check_value(value: object, problems: FieldProblems) -> None:
    if value is None:
        problems.add("value", "value is required and may be any JSON value but null")
        return
    limit = business_settings.VALUE_MAX_DEPTH
    if depth(value) > limit:
        problems.add("value", f"value nests deeper than {limit} levels; flatten it")
        return
    # Invisible and control characters in any string (object keys too) are refused, never
    # stored (SPEC 15); each string named by where it is.
    refused = 0
    for where, text in integrity.value_texts(value):
        problem = integrity.invisible_problem(text, where)
        if problem is None:
            continue
        refused += 1
        if refused <= _INVISIBLE_REPORTED:
            problems.add(where, problem)
    if refused > _INVISIBLE_REPORTED:
        problems.add(
            "value",
            f"value has {refused - _INVISIBLE_REPORTED} more strings with invisible or control "
            "characters",
        )


def clean_category(category: object, problems: FieldProblems) -> str | None:
    if category is None:
        return None
    if category not in Category.values:
        problems.add("category", f"category must be one of {', '.join(Category.values)}")
    return category if isinstance(category, str) else None


def clean_confidence(confidence: object, problems: FieldProblems) -> int | None:
    if confidence is None:
        return None
    if not _whole_number(confidence) or not 0 <= confidence <= 100:
        problems.add(
            "confidence",
            f"confidence must be a whole number from 0 to 100, not {json.dumps(confidence)[:40]}",
        )
        return None
    return confidence


def clean_source(source: object, problems: FieldProblems) -> Source | None:
    if source is None:
        return None
    if not isinstance(source, dict):
        problems.add("source", "source must be an object (pipeline_id, execution_id, ...)")
        return None
    allowed = (*_SOURCE_IDS, "extracted_at")
    for name in sorted(set(source) - set(allowed)):
        field = f"source.{name}"
        problems.add(field, f"{field} is not a field of source; it takes {', '.join(allowed)}")
    limit = business_settings.SOURCE_ID_MAX_CHARS
    ids: dict[str, str] = {}
    for name in _SOURCE_IDS:
        value = source.get(name)
        if value is None:
            continue
        field = f"source.{name}"
        problem = isinstance(value, str) and integrity.invisible_problem(value, field)
        if not isinstance(value, str) or not 1 <= len(value) <= limit:
            problems.add(field, f"{field} must be a string of 1 to {limit} characters")
        elif problem:
            problems.add(field, problem)
        elif not value.isprintable():
            problems.add(field, f"{field} may not contain control characters")
        else:
            ids[name] = value
    extracted = source.get("extracted_at")
    when = None
    if extracted is not None:
        when = _extraction_time(extracted, problems)
    return Source(**ids, extracted_at=when)


def entry_flags(key: str, value: Any, source: Source | None) -> list[integrity.Flag]:
    """Everything the integrity check finds in an entry about to be stored (SPEC 15): a row
    keeps at most MAX_FLAGS of them (``set_flags``), a write compares them all."""
    ids = {name: getattr(source, name) for name in _SOURCE_IDS} if source else {}
    return integrity.entry_flags(key=key, value=value, source=ids, limit=None)


def _extraction_time(extracted: object, problems: FieldProblems) -> datetime | None:
    field = "source.extracted_at"
    try:
        when = datetime.fromisoformat(str(extracted).replace("Z", "+00:00"))
        when = timezone.make_aware(when, UTC) if timezone.is_naive(when) else when
        when = when.astimezone(UTC)
    except (ValueError, OverflowError):
        problems.add(field, f"{field} must be a time like 2026-11-04T14:22:00Z")
        return None
    slack = timedelta(seconds=business_settings.EXTRACTED_AT_SLACK_SECONDS)
    if when > timezone.now() + slack:
        problems.add(field, f"{field} is in the future; give when it was extracted")
    elif when < EARLIEST_EXTRACTION:
        problems.add(
            field, f"{field} is before {EARLIEST_EXTRACTION.year}; give when it was extracted"
        )
    else:
        return when
    return None


def clean_ttl(ttl: object, problems: FieldProblems) -> int | _Unset | None:
    """Seconds until expiry; None removes an expiry; UNSET keeps the current one."""
    if ttl is UNSET or ttl is None:
        return ttl
    low, high = business_settings.TTL_MIN_SECONDS, business_settings.TTL_MAX_SECONDS
    if not _whole_number(ttl) or not low <= ttl <= high:
        problems.add(
            "ttl_seconds",
            f"ttl_seconds must be a whole number from {low:,} to {high:,} ({high // 86400} "
            "days), or null to remove an expiry",
        )
        return UNSET
    return ttl


def clean_choice(
    value: object, choices: tuple[str, ...], field: str, problems: FieldProblems
) -> str:
    """``value`` if it is one of ``choices``; else a problem, and "" (never used: the caller
    raises its problems before it reads what was cleaned)."""
    if not isinstance(value, str) or value not in choices:
        problems.add(field, f"{field} must be one of {', '.join(choices)}")
        return ""
    return value


def clean_limit(value: object, *, default: int, most: int, problems: FieldProblems) -> int:
    """How many results a read returns: ``default`` when none is asked, else a whole number
    from 1 to ``most`` (else a problem, and ``default``)."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        problems.add("limit", f"limit must be a whole number from 1 to {most}")
        return default
    return value


def clean_expected_version(value: object, problems: FieldProblems) -> int | None:
    if value is None:
        return None
    if not _whole_number(value) or value < 0:
        problems.add(
            "expected_version",
            "expected_version must be a whole number: the version you read, or 0 for "
            "'must not exist yet'",
        )
        return None
    return value


# --- merging -----------------------------------------------------------------------------


def merged_value(strategy: str, current: Any, new: Any, *, exists: bool) -> Any:
    """What ``strategy`` stores, given the ``current`` value (when the key ``exists``).

    A new key stores the given value under every strategy (``append`` an array of it).
    """
    if not exists:
        if strategy == Strategy.APPEND and not isinstance(new, list):
            return _appended([new])
        return new
    if strategy == Strategy.OVERWRITE:
        return new
    if strategy == Strategy.APPEND:
        if not isinstance(current, list):
            raise _mismatch(strategy, current, new, "the stored value to be an array")
        return _appended([*current, *(new if isinstance(new, list) else [new])])
    if not (_number(current) and _number(new)):
        raise _mismatch(strategy, current, new, "two numbers")
    if strategy == Strategy.MAX:
        return max(current, new)
    if strategy == Strategy.MIN:
        return min(current, new)
    return _sum(current, new)


def _appended(items: list) -> list:
    """The array an append stores, within the depth limit (an item as deep as the limit
    would sit one level deeper in it)."""
    limit = business_settings.VALUE_MAX_DEPTH
    if depth(items) > limit:
        problem = (
            f"value appended would nest deeper than {limit} levels in the array; flatten it "
            "(nothing was changed)"
        )
        raise ValidationFailed(f"{problem}.", details={"fields": {"value": [problem]}})
    return items


def _sum(current: float, new: float) -> float:
    try:
        total = current + new
    except OverflowError:  # an integer too large to add to a float
        total = math.inf
    if _whole_number(total) and not INT64[0] <= total <= INT64[1]:
        problem = (
            f"value would pass the 64-bit integer range by increment ({current} + {new}); "
            "nothing was changed"
        )
        raise ValidationFailed(
            f"{problem}.", details={"fields": {"value": [problem]}, "reason": "overflow"}
        )
    if isinstance(total, float) and not math.isfinite(total):
        problem = "value would become infinite by increment; nothing was changed"
        raise ValidationFailed(
            f"{problem}.", details={"fields": {"value": [problem]}, "reason": "not_finite"}
        )
    return total


def _mismatch(strategy: str, current: Any, new: Any, wanted: str) -> MergeTypeMismatch:
    return MergeTypeMismatch(
        f"{strategy} needs {wanted}, but the stored value is a {json_type(current)} and the "
        f"given one a {json_type(new)}; nothing was changed. Use strategy overwrite to "
        "replace it.",
        details={
            "strategy": strategy,
            "stored_type": json_type(current),
            "given_type": json_type(new),
        },
    )


# --- reading -----------------------------------------------------------------------------


def flattened(value: Any) -> str:
    """A value's text for embedding: keys and leaves, one per line."""
    lines: list[str] = []

    def walk(item: Any, prefix: str) -> None:
        if isinstance(item, dict):
            for key, inner in item.items():
                walk(inner, f"{prefix}{key}: ")
        elif isinstance(item, list):
            for inner in item:
                walk(inner, prefix)
        else:
            lines.append(f"{prefix}{item}")

    walk(value, "")
    return "\n".join(lines)


def embedding_input(key: str, category: str, value: Any) -> str:
    """An entry's embedding input: key, category and the value's text, cut to the limit."""
    return input_text(f"{key.replace('_', ' ')}\n{category}\n{flattened(value)}")


def expires_at(ttl: int | None, now: datetime) -> datetime | None:
    return now + timedelta(seconds=ttl) if ttl is not None else None


def capacity(layer: str) -> int:
    if layer == Layer.ACCOUNT:
        return business_settings.ACCOUNT_CAPACITY
    return business_settings.MEMBER_CAPACITY
