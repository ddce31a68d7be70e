"""Every distance the product uses, per embedding model (SPEC 14).

A cosine distance of 0.10 means "the same finding" for one model and "unrelated" for
another, so no threshold is global: each model has its own, and every use (near duplicates
and overlaps at save, overlap pairs at recall, consolidation merges) asks the provider's
model. They come from, in order: the provider's options (an operator's explicit choice);
the operator's thresholds file (``EMBEDDING_THRESHOLDS_FILE``, written by
``manage.py calibrate_embeddings --write``); the file that ships with Kit
(``core/thresholds.json``, written by the same command for each bundled model, with the
report in docs/embeddings.md); the thresholds a local model's manifest names; and for a
model nobody calibrated, the product page's 0.10 / 0.30, which is
``gemini-embedding-001``'s contract.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.core.signals import setting_changed

from prospect_memory.core.conf import core_settings

#: The thresholds that ship with Kit, one entry per model.
SHIPPED_FILE = Path(__file__).with_name("thresholds.json")

#: For a model with no calibration: the product page's numbers (Gemini's contract).
UNCALIBRATED = {"near_duplicate": 0.10, "overlap": 0.30}


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


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return data.get("models", {}) if isinstance(data, dict) else {}


def _operator_file() -> Path | None:
    name = core_settings.EMBEDDING_THRESHOLDS_FILE
    return Path(name) if name else None


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, Any]]:
    table = dict(_read(SHIPPED_FILE))
    operator = _operator_file()
    if operator is not None:
        table.update(_read(operator))
    return table


def _entry(model: str, manifest: tuple) -> tuple[dict[str, Any], str]:
    table = _table()
    # "gemini-embedding-001/768": the entry of the model at that size, else of the model.
    for name in (model, model.split("/", 1)[0]):
        if name in table:
            entry = table[name]
            return entry, entry.get("source", f"calibrated for {name}")
    if manifest:
        return dict(manifest), "named in the model's manifest"
    return UNCALIBRATED, "not calibrated: the product page's 0.10 / 0.30"


def thresholds_for(
    model: str,
    *,
    given: dict[str, float | None] | None = None,
    manifest: dict[str, float] | None = None,
) -> Thresholds:
    """``model``'s thresholds, with any ``given`` by the provider's options on top, and
    those of its ``manifest`` (a local model's) below every file."""
    return _thresholds(
        model, tuple(sorted((given or {}).items())), tuple(sorted((manifest or {}).items()))
    )


@lru_cache(maxsize=16)
def _thresholds(model: str, given: tuple, manifest: tuple) -> Thresholds:
    entry, source = _entry(model, manifest)
    chosen = {k: v for k, v in given if v is not None}
    near = float(chosen.get("near_duplicate", entry["near_duplicate"]))
    overlap = float(chosen.get("overlap", entry["overlap"]))
    if chosen:
        source = "set in EMBEDDING_OPTIONS"
    return Thresholds(
        near_duplicate=near,
        overlap=max(overlap, near),
        merge=float(entry.get("merge", near)) if not chosen else near,
        source=source,
    )


def forget() -> None:
    """Read the files again on next use (after a write, or a settings change)."""
    _table.cache_clear()
    _thresholds.cache_clear()


def write(model: str, values: dict[str, Any], *, path: Path | None = None) -> Path:
    """Store ``values`` (``near_duplicate``, ``overlap``, and what the report says of them)
    as ``model``'s thresholds in the operator's file, or the shipped one when none is set;
    atomically, keeping the other models' entries."""
    target = path or _operator_file() or SHIPPED_FILE
    try:
        data = json.loads(target.read_text())
    except FileNotFoundError:
        data = {}
    data.setdefault("models", {})[model] = values
    data["models"] = dict(sorted(data["models"].items()))
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".thresholds-")
    with os.fdopen(handle, "w") as out:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    Path(temporary).replace(target)
    forget()
    return target


def _settings_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "PROSPECT_MEMORY":
        forget()


setting_changed.connect(_settings_changed, weak=False)
