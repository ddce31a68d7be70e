"""Business memory's part in an account's lifecycle (SPEC 16), registered at ``ready()``
(:mod:`prospect_memory.core.lifecycle`): its records in an export and read back from one, a
departing member's own context, the layers' locks before an account goes, and the
retention of entry events and evictions.

Records, in this order: ``entry`` (the shared layer, and the exporting member's own layer,
in every status; nobody else's own layer ever) and ``entry_version`` (the versions kept of
those entries). Values are decrypted; an entry names the entry it was merged into
(``alias_of``) and a version its entry (``entry``) by the exporting Kit's ids.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, cast

from django.db.models import Model, Q

from outreach.errors import KitError
from outreach.models import Account, Member
from outreach.validation import FieldProblems
from prospect_memory.business.access import Place
from prospect_memory.business.conf import business_settings
from prospect_memory.business.models import (
    Category,
    Entry,
    EntryEvent,
    EntryVersion,
    Layer,
    Shelf,
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
from prospect_memory.business.services.consolidate import retired_purge
from prospect_memory.business.services.lock import lock_shelf
from prospect_memory.core.lifecycle import ExportScope, MemoryLifecycle, RetentionScope, Rule
from prospect_memory.core.lifecycle.fields import Fields, ImportRefused
from prospect_memory.core.lifecycle.importing import ImportSession, checked_again
from prospect_memory.core.lifecycle.records import (
    FLAG_COLUMNS,
    integrity,
    moment,
    opened,
    pages,
    ref,
)
from prospect_memory.core.lifecycle.removing import (
    FORMER_MEMBER,
    delete_in_batches,
    forget_admin_log,
)

SOURCE_COLUMNS = (
    "source_pipeline_id",
    "source_execution_id",
    "source_step_id",
    "source_extracted_at",
)
WRITER_COLUMNS = ("written_by__user__username", "written_by_label", "oauth_application__name")
ENTRY_COLUMNS = (
    "id",
    "layer",
    "key",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "version",
    "strategy",
    "status",
    "alias_of_id",
    "retired_at",
    "created_at",
    "updated_at",
    "written_at",
    "expires_at",
    "used_at",
    "last_accessed_at",
    "access_count",
    "idle_periods_charged",
    "kept_apart",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)
VERSION_COLUMNS = (
    "id",
    "entry_id",
    "version",
    "value_ciphertext",
    "category",
    "confidence",
    *SOURCE_COLUMNS,
    "strategy",
    "written_at",
    *WRITER_COLUMNS,
    *FLAG_COLUMNS,
)


def records(scope: ExportScope) -> Iterator[dict[str, Any]]:
    account, member = scope.account, scope.member
    owner = account.pk
    entries = Entry.objects.filter(_layers(member), account=account)
    order = ("layer", "member_id", "status", "key", "id")
    for row in pages(entries, ENTRY_COLUMNS, order, scope.batch_rows):
        yield _entry_record(row, owner)
    versions = EntryVersion.objects.filter(_layers(member, through="entry__"), account=account)
    for row in pages(versions, VERSION_COLUMNS, ("entry_id", "-version"), scope.batch_rows):
        yield _version_record(row, owner)


def held(account: Account) -> list[str]:
    return ["business memory entries"] if Entry.objects.filter(account=account).exists() else []


def _layers(member: Member | None, *, through: str = "") -> Q:
    """The shared layer, and ``member``'s own."""
    shared = Q(**{f"{through}layer": Layer.ACCOUNT})
    if member is None:
        return shared
    return shared | Q(**{f"{through}layer": Layer.MEMBER, f"{through}member": member})


def _source(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "pipeline_id": row["source_pipeline_id"],
        "execution_id": row["source_execution_id"],
        "step_id": row["source_step_id"],
        "extracted_at": moment(row["source_extracted_at"]),
    }


def _written(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "written_by": row["written_by__user__username"],
        "written_by_label": row["written_by_label"],
        "client": row["oauth_application__name"],
    }


def _entry_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "entry",
        "id": ref(row["id"]),
        "layer": row["layer"],
        "key": row["key"],
        "value": json.loads(opened(Entry, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "version": row["version"],
        "strategy": row["strategy"],
        "status": row["status"],
        "alias_of": ref(row["alias_of_id"]),
        "retired_at": moment(row["retired_at"]),
        "created_at": moment(row["created_at"]),
        "updated_at": moment(row["updated_at"]),
        "written_at": moment(row["written_at"]),
        "expires_at": moment(row["expires_at"]),
        "used_at": moment(row["used_at"]),
        "last_accessed_at": moment(row["last_accessed_at"]),
        "access_count": row["access_count"],
        "idle_periods_charged": row["idle_periods_charged"],
        "kept_apart": row["kept_apart"],
        **_written(row),
        "integrity": integrity(Entry, account_id, row),
    }


def _version_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "entry_version",
        "id": ref(row["id"]),
        "entry": ref(row["entry_id"]),
        "version": row["version"],
        "value": json.loads(opened(EntryVersion, "value_json", account_id, row)),
        "category": row["category"],
        "confidence": row["confidence"],
        "source": _source(row),
        "strategy": row["strategy"],
        "written_at": moment(row["written_at"]),
        **_written(row),
        "integrity": integrity(EntryVersion, account_id, row),
    }


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
            expires_at=fields.moment("expires_at", null=True),
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


# --- erasures -----------------------------------------------------------------------------


def member_leaving(member: Member, names: set[str]) -> dict[str, int]:
    """The member's own context (entries with their versions, evictions, aliases and
    vectors; the events that name its keys) goes; what they wrote for the account stays
    the account's, attributed to :data:`FORMER_MEMBER`."""
    account_id = member.account_id
    # Their own layer's writes wait, as every write of a layer waits on its shelf.
    lock_shelf(Place(account_id, Layer.MEMBER, member.pk))
    own = Entry.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member)
    own_ids = list(own.values_list("id", flat=True))
    # Every entry they ever had was stored by them once: Kit's own events about it (an
    # eviction, a merge) name it by id even after the entry is gone.
    own_events = EntryEvent.objects.filter(account_id=account_id, layer=Layer.MEMBER)
    ever_ids = {
        *own_ids,
        *own_events.filter(member=member).exclude(entry_id=None).values_list("entry_id", flat=True),
    }
    counts = {
        "own_entries": len(own_ids),
        "own_versions": EntryVersion.objects.filter(entry_id__in=own_ids).count(),
    }
    counts["own_events"], _ = own_events.filter(
        Q(member=member) | Q(entry_id__in=ever_ids)
    ).delete()
    counts["admin_log_entries"] = forget_admin_log(Entry, ever_ids)
    own.delete()
    Shelf.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member).delete()
    # What stays the account's no longer names them.
    EntryEvent.objects.filter(account_id=account_id).filter(
        Q(member=member) | Q(actor__in=names)
    ).update(member=None, actor=FORMER_MEMBER)
    written = Q(written_by=member) | Q(written_by_label__in=names)
    for row in (Entry, EntryVersion):
        row.objects.filter(account_id=account_id).filter(written).update(
            written_by=None, written_by_label=FORMER_MEMBER
        )
    return counts


def lock_account(account_id: int) -> None:
    """Every layer's lock, in id order, as each writer of a layer takes its own: a store
    under way finishes first, and the deletion of entries (which updates their shelves'
    counts) never waits on a store that waits on an entry."""
    list(Shelf.objects.filter(account_id=account_id).select_for_update().order_by("id"))


# --- retention ----------------------------------------------------------------------------


def rules() -> list[Rule]:
    return [
        Rule(
            "evictions",
            "Evicted and expired entries",
            business_settings.RETIRED_KEEP_DAYS,
            zero_keeps=False,
        )
    ]


def retain(scope: RetentionScope) -> dict[str, int]:
    """Entry events past the audit events' days, and evictions past RETIRED_KEEP_DAYS."""
    removed: dict[str, int] = {}
    if scope.days.get("audit_events"):
        cutoff = scope.now - timedelta(days=scope.days["audit_events"])
        removed["audit_events"] = delete_in_batches(
            EntryEvent.objects.filter(created_at__lt=cutoff), scope.batch_rows
        )
    removed["evictions"] = retired_purge(now=scope.now)
    return removed


LIFECYCLE = MemoryLifecycle(
    name="business",
    record_types=("entry", "entry_version"),
    records=records,
    held=held,
    importer=BusinessImporter,
    member_leaving=member_leaving,
    lock_account=lock_account,
    rules=rules,
    retain=retain,
)
