"""Every distance the product uses, per embedding model (SPEC 14).

A cosine distance of 0.10 means "the same finding" for one model and "unrelated" for
another, so no threshold is global: each model has its own, and every use (near duplicates
and overlaps at save, overlap pairs at recall, consolidation merges) asks the provider's
model. They come from, in order: the provider's options (an operator's explicit choice);
the operator's thresholds file (``EMBEDDING_THRESHOLDS_FILE``, written by
``manage.py calibrate_embeddings --write``); the file that ships with Kit
(``core/embeddings/thresholds.json``, written by the same command for each bundled model, with the
report in docs/embeddings.md); the thresholds a local model's manifest names; and for a
model nobody calibrated, the product page's 0.10 / 0.30, which is
``gemini-embedding-001``'s contract.

The files are read again when they change on disk, so a process sees what the command
wrote without a restart (within ``LOOK_AGAIN_SECONDS``). A file that cannot be used is
reported by the system check ``prospect_memory.E007``; meanwhile it is left out (and said so
in the thresholds' source) rather than failing every save.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import math
import os
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.core.signals import setting_changed

from prospect_memory.core.conf import core_settings

logger = logging.getLogger(__name__)

#: The thresholds that ship with Kit, one entry per model.
SHIPPED_FILE = Path(__file__).with_name("thresholds.json")

#: For a model with no calibration: the product page's numbers (Gemini's contract).
UNCALIBRATED = {"near_duplicate": 0.10, "overlap": 0.30}


class ThresholdsError(ValueError):
    """A thresholds file, or thresholds given as options, that cannot be used: which, why."""


@dataclass(frozen=True)
class Thresholds:
    #: At or below: the same finding (a near duplicate at save).
    near_duplicate: float
    #: At or below: the same fact, or part of it (an overlap at save and at recall).
    overlap: float
    #: At or below: consolidation merges two entries of one layer and category.
    merge: float
    #: Where the numbers come from, in words (shown on the memory health page).
    source: str


def distance(value: object, what: str) -> float:
    """``value`` as a cosine distance threshold (above 0, below 2), or ThresholdsError."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value < 2
    ):
        raise ThresholdsError(f"{what} must be a cosine distance above 0 and below 2")
    return float(value)


def checked_entry(entry: object, where: str) -> dict[str, Any]:
    """One model's entry of a thresholds file, checked: near_duplicate <= overlap."""
    if not isinstance(entry, dict):
        raise ThresholdsError(f"{where} must be an object")
    near = distance(entry.get("near_duplicate"), f"{where}.near_duplicate")
    overlap = distance(entry.get("overlap"), f"{where}.overlap")
    if near > overlap:
        raise ThresholdsError(f"{where}: near_duplicate ({near}) is above overlap ({overlap})")
    merge = distance(entry.get("merge", near), f"{where}.merge")
    return {**entry, "near_duplicate": near, "overlap": overlap, "merge": merge}


def read(path: Path) -> dict[str, dict[str, Any]]:
    """The models of a thresholds file (none if it does not exist), or ThresholdsError."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ThresholdsError(f"{path} cannot be read as JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("models", {}), dict):
        raise ThresholdsError(f'{path} must be an object with "models": {{model: thresholds}}')
    return {
        model: checked_entry(entry, f"{path}: {model}")
        for model, entry in data.get("models", {}).items()
    }


def _operator_file() -> Path | None:
    name = core_settings.EMBEDDING_THRESHOLDS_FILE
    return Path(name) if name else None


def _signature(path: Path | None) -> tuple[Any, ...]:
    """What changes when the file does (read again then)."""
    if path is None:
        return ()
    try:
        stat = path.stat()
    except OSError:
        return (str(path),)
    return (str(path), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


#: How long a process goes by what it last saw of the files before it looks again: each
#: recall and save asks for a threshold, and two ``stat`` calls each time cost more than
#: the rest of the answer's rules. A file written elsewhere is seen within this time; one
#: written by this process (``write``) or named by new settings, at once (``forget``).
LOOK_AGAIN_SECONDS = 1.0
_seen: dict[Path | None, tuple[float, tuple[tuple[Any, ...], tuple[Any, ...]]]] = {}


def _signatures() -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    operator = _operator_file()
    now = time.monotonic()
    seen = _seen.get(operator)
    if seen is not None and now - seen[0] < LOOK_AGAIN_SECONDS:
        return seen[1]
    signatures = _signature(SHIPPED_FILE), _signature(operator)
    _seen.clear()
    _seen[operator] = (now, signatures)
    return signatures


@lru_cache(maxsize=4)
def _read_both(
    shipped: tuple[Any, ...], operator: tuple[Any, ...]
) -> tuple[dict[str, dict[str, Any]], str]:
    """Both files' models, the operator's over the shipped ones, and what was left out."""
    table: dict[str, dict[str, Any]] = {}
    left_out = []
    for signature in (shipped, operator):
        if not signature:
            continue
        try:
            table.update(read(Path(signature[0])))
        except ThresholdsError as exc:
            logger.error("embedding thresholds: %s; the file is left out", exc)
            left_out.append(signature[0])
    return table, ", ".join(left_out)


def problems() -> list[str]:
    """What is wrong with the thresholds files (for the system check)."""
    found = []
    for path in (SHIPPED_FILE, _operator_file()):
        if path is None:
            continue
        try:
            read(path)
        except ThresholdsError as exc:
            found.append(str(exc))
    return found


def _entry(
    model: str, manifest: tuple[Any, ...], signatures: tuple[Any, ...]
) -> tuple[dict[str, Any], str]:
    table, left_out = _read_both(*signatures)
    note = f" ({left_out} left out: unreadable)" if left_out else ""
    # "gemini-embedding-001/768": the entry of the model at that size, else of the model.
    for name in (model, model.split("/", 1)[0]):
        if name in table:
            entry = table[name]
            return entry, entry.get("source", f"calibrated for {name}") + note
    if manifest:
        return dict(manifest), "named in the model's manifest" + note
    return UNCALIBRATED, "not calibrated: the product page's 0.10 / 0.30" + note


def thresholds_for(
    model: str,
    *,
    given: dict[str, float | None] | None = None,
    manifest: dict[str, float] | None = None,
) -> Thresholds:
    """``model``'s thresholds, with any ``given`` by the provider's options on top, and
    those of its ``manifest`` (a local model's) below every file. ThresholdsError if the
    options and the rest disagree (an overlap below the near-duplicate distance)."""
    given_items = tuple(sorted((k, v) for k, v in (given or {}).items() if v is not None))
    return _thresholds(model, given_items, tuple(sorted((manifest or {}).items())), _signatures())


@lru_cache(maxsize=16)
def _thresholds(
    model: str, given: tuple[Any, ...], manifest: tuple[Any, ...], signatures: tuple[Any, ...]
) -> Thresholds:
    entry, source = _entry(model, manifest, signatures)
    chosen = {key: distance(value, f"{key}_distance") for key, value in given}
    near = chosen.get("near_duplicate", entry["near_duplicate"])
    overlap = chosen.get("overlap", entry["overlap"])
    if near > overlap:
        raise ThresholdsError(
            f"the overlap distance ({overlap}) is below the near-duplicate distance ({near}) "
            f"for {model}; set both in EMBEDDING_OPTIONS, overlap at least near duplicate"
        )
    if chosen:
        named = " and ".join(f"{key}_distance" for key in chosen)
        source = f"{named} set in EMBEDDING_OPTIONS; otherwise {source}"
    merge = near if "near_duplicate" in chosen else float(entry.get("merge", near))
    return Thresholds(near_duplicate=near, overlap=overlap, merge=merge, source=source)


def forget() -> None:
    """Read the files again on next use (after a settings change)."""
    _seen.clear()
    _read_both.cache_clear()
    _thresholds.cache_clear()


def write(model: str, values: dict[str, Any], *, path: Path | None = None) -> Path:
    """Store ``values`` (``near_duplicate``, ``overlap``, and what the report says of them)
    as ``model``'s thresholds in the operator's file, or the shipped one when none is set:
    under a lock, atomically and durably, keeping the other models' entries and the file's
    permissions (readable by the processes that serve)."""
    target = path or _operator_file() or SHIPPED_FILE
    checked_entry(values, model)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(f".{target.name}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        models = read(target)
        models[model] = values
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}-")
        try:
            with os.fdopen(handle, "w") as out:
                os.fchmod(out.fileno(), mode)
                out.write(json.dumps({"models": dict(sorted(models.items()))}, indent=2) + "\n")
                out.flush()
                os.fsync(out.fileno())
            Path(temporary).replace(target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                Path(temporary).unlink()
    forget()
    return target


def _settings_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "PROSPECT_MEMORY":
        forget()


setting_changed.connect(_settings_changed, weak=False)
