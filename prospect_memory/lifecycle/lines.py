"""An export's lines read back (:mod:`prospect_memory.lifecycle.export` describes them):
numbered and hashed as they come, each parsed into a record's fields
(:class:`~prospect_memory.core.lifecycle.fields.Fields`, which the memories read), and the
manifest checked against them; anything else refused, naming its line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator

from prospect_memory.core.lifecycle import MANIFEST
from prospect_memory.core.lifecycle.fields import Fields, ImportRefused
from prospect_memory.lifecycle.conf import lifecycle_settings


def read_lines(file) -> Iterator[bytes]:
    """The lines of a binary file, none read past IMPORT_LINE_MAX_BYTES (a longer line is
    given in pieces, and refused at its first)."""
    limit = lifecycle_settings.IMPORT_LINE_MAX_BYTES + 2
    while line := file.readline(limit):
        yield line


class Stream:
    """The lines of an export, numbered, each line before the manifest hashed."""

    def __init__(self, lines: Iterable[bytes | str]) -> None:
        self._lines = enumerate(lines, start=1)
        self._digest = hashlib.sha256()
        self.manifest: Fields | None = None

    def records(self) -> Iterator[Fields]:
        limit = lifecycle_settings.IMPORT_LINE_MAX_BYTES
        for number, raw in self._lines:
            text = _line_text(raw)
            if len(text) > limit:
                self._digest.update(text + b"\n")
                raise ImportRefused(
                    f"longer than {limit:,} bytes; no record of an export is.", line=number
                )
            if self.manifest is not None:
                if text.strip():
                    raise ImportRefused("found after the manifest, the last line.", line=number)
                continue
            fields = self._parse(number, text)
            if fields.type == MANIFEST:
                self.manifest = fields
                continue
            self._digest.update(text + b"\n")
            yield fields

    def _parse(self, number: int, text: bytes) -> Fields:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            self._digest.update(text + b"\n")
            raise ImportRefused("not a JSON object; the file is malformed.", line=number) from None
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            self._digest.update(text + b"\n")
            raise ImportRefused("not a record (a JSON object with a type).", line=number)
        return Fields(number, data)

    def drain(self) -> None:
        """Read what is left only to hash it: a refusal says so when the file was altered."""
        for _, raw in self._lines:
            if self.manifest is not None:
                return
            text = _line_text(raw)
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                data = None
            if isinstance(data, dict) and data.get("type") == MANIFEST:
                self.manifest = Fields(0, data)
            else:
                self._digest.update(text + b"\n")

    def altered(self) -> bool:
        return self.manifest is not None and self.manifest.data.get("sha256") != self.digest

    @property
    def digest(self) -> str:
        return self._digest.hexdigest()

    def altered_refusal(self) -> ImportRefused:
        return ImportRefused(
            "the file's checksum does not match its manifest: it was altered after the "
            "export. Export again."
        )

    def check_manifest(self, counts: dict[str, int]) -> None:
        if self.manifest is None:
            raise ImportRefused(
                "the file has no manifest (its last line): it was cut short. Export again."
            )
        if self.altered():
            raise self.altered_refusal()
        stated = self.manifest.data.get("counts")
        if not isinstance(stated, dict) or {k: v for k, v in stated.items() if v} != {
            k: v for k, v in counts.items() if v
        }:
            raise self.manifest.refuse(
                f"the manifest counts {stated} records but the file holds {dict(counts)}."
            )


def _line_text(raw: bytes | str) -> bytes:
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    return raw.rstrip(b"\r\n")
