"""Business memory's side of an import: entries and their kept versions, each checked as a
store would check it (keys, values, sources, a layer's capacity), and what they must say
of each other once all are read (a file can be edited and given a new checksum)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

from django.db.models import Model
from django.utils import timezone

from outreach.errors import KitError
from outreach.models import Account
from outreach.validation import FieldProblems
from prospect_memory.business.access import Place
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Category,
    Entry,
    EntryVersion,
    Layer,
    Strategy,
)
from prospect_memory.business.rules import (
    capacity,
    check_value,
    clean_confidence,
    clean_key,
    clean_source,
    encode_value,
    entry_flags,
)
from prospect_memory.business.services import promotion
from prospect_memory.business.services.lock import lock_shelf
from prospect_memory.core.lifecycle.fields import CLOCK_SKEW, Fields, ImportRefused
from prospect_memory.core.lifecycle.importing import ImportSession, checked_again


def held(account: Account) -> list[str]:
    return ["business memory entries"] if Entry.objects.filter(account=account).exists() else []


class BusinessImporter:
    """Business memory's side of one import: entries and their kept versions, each checked
    as a store would check it, the layers' capacities included."""

    models: tuple[type[Model], ...] = (Entry, EntryVersion)

    def __init__(self, session: ImportSession) -> None:
        self.session = session
        self.builders: dict[str, Callable[[Fields], Model]] = {
            "entry": self._entry,
            "entry_version": self._version,
        }
        self._shelves: set[tuple[str, int | None]] = set()
        #: Each entry's layer, status, key and version by its id in the file; the aliases
        #: to check against them; each entry's kept versions' numbers with the line of
        #: each; and the live entries of each layer (capacity).
        self._layers: dict[str, str] = {}
        self._statuses: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        self._versions_of: dict[str, int] = {}
        self._aliases: list[tuple[str, str, str, int]] = []
        self._kept: dict[str, dict[int, int]] = defaultdict(dict)
        self._live: Counter[tuple[str, int | None]] = Counter()

    def _entry(self, fields: Fields) -> Entry:
        session = self.session
        layer = fields.choice("layer", Layer.values)
        owner = None
        if layer == Layer.MEMBER:
            if session.member is None:
                raise fields.refuse(
                    "a member's own entry; name the member of this account who receives it."
                )
            owner = session.member.pk
        self._shelf(layer, owner)
        old_id = fields.ref("id")
        self._layers[old_id] = layer
        alias = fields.ref("alias_of", null=True)
        if alias is not None:
            self._aliases.append((old_id, alias, layer, fields.number))
        entry = Entry(
            id=session.define("entry", fields),
            account_id=session.account.pk,
            layer=layer,
            member_id=owner,
            key=fields.text("key"),
            version=fields.integer("version"),
            status=fields.choice("status", Entry.Status.values),
            alias_of_id=session.refer("entry", alias, fields),
            retired_at=fields.moment("retired_at", null=True),
            created_at=fields.moment("created_at"),
            updated_at=fields.moment("updated_at"),
            written_at=fields.moment("written_at"),
            expires_at=self._expiry(fields),
            used_at=fields.moment("used_at"),
            last_accessed_at=fields.moment("last_accessed_at", null=True),
            access_count=fields.integer("access_count"),
            idle_periods_charged=fields.integer("idle_periods_charged"),
            kept_apart=fields.boolean("kept_apart"),
        )
        self._statuses[old_id] = entry.status
        self._keys[old_id] = entry.key
        self._versions_of[old_id] = entry.version
        problems = FieldProblems()
        if clean_key(entry.key, problems) != entry.key:
            problems.add("key", f"key {entry.key!r} is not written as Kit keeps it")
        fields.check(problems)
        self._set_written(entry, fields)
        entry.value_bytes = len(entry.value_json.encode())
        if entry.status == Entry.Status.LIVE:
            self._live[(layer, owner)] += 1
            if self._live[(layer, owner)] > capacity(layer):
                raise fields.refuse(
                    f"the {layer} layer would hold over {capacity(layer)} live entries, its "
                    "capacity."
                )
        return entry

    def _expiry(self, fields: Fields) -> datetime | None:
        """When the entry expires: no further off than the longest time to live a store
        takes (TTL_MAX_SECONDS), as from now."""
        expires_at = fields.moment("expires_at", null=True, to_come=True)
        latest = timezone.now() + timedelta(seconds=business_settings.TTL_MAX_SECONDS)
        if expires_at is not None and expires_at > latest + CLOCK_SKEW:
            raise fields.refuse(
                f"expires_at lies further off than {business_settings.TTL_MAX_SECONDS:,} "
                "seconds from now, the longest time to live an entry takes.",
                field="expires_at",
            )
        return expires_at

    def _version(self, fields: Fields) -> EntryVersion:
        entry = fields.ref("entry")
        if entry not in self._keys:  # read with its entry's key, as a restore would be
            raise fields.refuse(
                f"names entry {entry}, which no record before it holds; an export lists "
                "each entry before its kept versions.",
                field="entry",
            )
        number = fields.integer("version")
        kept = self._kept[entry]
        if number in kept:
            raise fields.refuse(
                f"version {number} of entry {entry} is in the file twice (line {kept[number]} "
                "too).",
                field="version",
            )
        kept[number] = fields.number
        version = EntryVersion(
            id=self.session.define("entry_version", fields),
            account_id=self.session.account.pk,
            entry_id=self.session.refer("entry", entry, fields),
            version=number,
            written_at=fields.moment("written_at"),
        )
        self._set_written(version, fields)
        return version

    def _set_written(self, row: Entry | EntryVersion, fields: Fields) -> None:
        """What an entry and a version share: value, kind, source, writer and flags."""
        value = fields.value("value")
        problems = FieldProblems()
        check_value(value, problems)
        source = fields.section("source")
        ids = {name: source.text(name) for name in ("pipeline_id", "execution_id", "step_id")}
        cleaned = clean_source({k: v for k, v in ids.items() if v}, problems)
        clean_confidence(fields.integer("confidence"), problems)
        fields.check(problems)
        try:
            row.value_json = encode_value(value)
        except KitError as error:
            raise fields.refuse(error.message) from None
        row.category = fields.choice("category", Category.values)
        row.confidence = fields.integer("confidence")
        row.strategy = fields.choice("strategy", Strategy.values)
        row.source_pipeline_id = ids["pipeline_id"]
        row.source_execution_id = ids["execution_id"]
        row.source_step_id = ids["step_id"]
        row.source_extracted_at = source.moment("extracted_at", null=True)
        row.written_by_id = self.session.seat(fields, "written_by")
        label_length = type(row)._meta.get_field("written_by_label").max_length or 0
        row.written_by_label = fields.label("written_by_label", max_length=label_length)
        key = row.key if isinstance(row, Entry) else self._keys[fields.ref("entry")]
        checked_again(row, entry_flags(key, value, cleaned), fields)

    def _shelf(self, layer: str, owner: int | None) -> None:
        """The layer's lock, as every write of it takes."""
        if (layer, owner) not in self._shelves:
            lock_shelf(Place(self.session.account.pk, layer, owner))
            self._shelves.add((layer, owner))

    def stored(self, model: type[Model], rows: list[Model]) -> None:
        if model is Entry:
            promotion.schedule(cast(list[Entry], rows))

    def finish(self) -> None:
        _aliases_answer_for_live_entries(self._aliases, self._layers, self._statuses)
        _kept_versions_fit(self._kept, self._versions_of)


def _aliases_answer_for_live_entries(
    aliases: list[tuple[str, str, str, int]], layers: dict[str, str], statuses: dict[str, str]
) -> None:
    """An alias (its id, the entry it names, its layer, its line) answers for another, live
    entry of its own layer: never for itself or another alias (a circle)."""
    for alias, target, layer, number in aliases:
        if target == alias:
            problem = "alias_of names the entry itself; an alias answers for another entry."
        elif layers.get(target) != layer:
            problem = (
                f"alias_of names an entry of another layer than its own ({layer}); an alias "
                "answers for an entry of its layer."
            )
        elif statuses[target] != Entry.Status.LIVE:
            problem = (
                f"alias_of names an entry that is {statuses[target]}, not live; an alias "
                "answers for a live entry (never for another alias)."
            )
        else:
            continue
        raise ImportRefused(f"entry record: {problem}", line=number, field="alias_of")


def _kept_versions_fit(kept: dict[str, dict[int, int]], versions_of: dict[str, int]) -> None:
    """An entry keeps at most HISTORY_VERSIONS versions (by number, with their lines), each
    older than the entry itself."""
    most = business_settings.HISTORY_VERSIONS
    for entry, numbers in kept.items():
        current = versions_of.get(entry)
        newest = max(numbers)
        if current is not None and newest >= current:
            raise ImportRefused(
                f"entry_version record: version {newest} of entry {entry} is not older than "
                f"the entry's own version {current}.",
                line=numbers[newest],
                field="version",
            )
        if len(numbers) > most:
            raise ImportRefused(
                f"entry_version record: entry {entry} has {len(numbers)} kept versions; Kit "
                f"keeps the {most} newest of an entry.",
                line=sorted(numbers.values())[most],
                field="version",
            )
