"""An export (:mod:`prospect_memory.lifecycle.export`, which describes the file) imported
into an empty account of this Kit: every row or none, each with a new id, its text sealed
under this Kit's key and bound to the new row; references follow the new ids.

The file is checked as every write is: the checksum only shows it was not damaged (anyone
who edits the file can compute a new one), so each record meets the rules of its memory
(domains, sizes, sources, keys, values, invisible characters refused, the per-domain note
cap, a layer's capacity) and its text is checked for instructions again: flags in the file
are not trusted, and what this Kit's checks find is flagged for its people to review. A person
named in the file is linked to their seat when their user is a member of the importing
account, and left out otherwise (an entry keeps ``written_by_label``). Imported rows wait
for the embedding backfill, as rows saved while the provider was down do."""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import DatabaseError, transaction
from django.db.models import Model

from outreach.errors import KitError
from outreach.models import Account, Member
from outreach.validation import FieldProblems
from prospect_memory.business.access import Place
from prospect_memory.business.models import Category, Entry, EntryVersion, Layer, Strategy
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
from prospect_memory.core.lifecycle import lifecycles, record_types
from prospect_memory.lifecycle.coherence import (
    aliases_answer_for_live_entries,
    kept_versions_fit,
    notes_keep_to_their_company,
)
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.export import FORMAT, KIND
from prospect_memory.lifecycle.lines import Fields, ImportRefused, Stream
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.models import Compaction, Dossier, Note
from prospect_memory.notes.rules import clean_note_input, note_flags


def import_lines(
    lines: Iterable[bytes | str], account: Account, *, member: Member | None = None
) -> dict[str, int]:
    """Import an export into ``account``, which must hold no note, dossier or business
    memory entry; the records imported, by type.

    ``member`` (a member of ``account``) receives the own business memory the file holds;
    a file with one is refused without. The file is read once, in one transaction: a
    malformed or unknown record, a missing or different manifest, or a checksum that does
    not match (the file was altered) refuses the whole import.
    """
    if member is not None and member.account_id != account.pk:
        raise ImportRefused(f"{member} is not a member of account {account.slug}.")
    stream = Stream(lines)
    with transaction.atomic():
        _require_empty(account)
        importer = _Importer(account, member)
        try:
            records = stream.records()
            _check_header(next(records, None), member)
            for fields in records:
                importer.add(fields)
            importer.flush()
        except (ImportRefused, DatabaseError) as problem:
            stream.drain()
            if stream.altered():
                raise stream.altered_refusal() from problem
            if isinstance(problem, DatabaseError):
                raise ImportRefused(
                    f"the records do not fit together as stored memories ({problem})."
                ) from problem
            raise
        stream.check_manifest(importer.counts)
        importer.finish()
    return dict(importer.counts)


def _require_empty(account: Account) -> None:
    """Lock the account (its writes wait for the import) and refuse one that holds memories."""
    Account.objects.select_for_update().get(pk=account.pk)
    found = [name for memory in lifecycles() for name in memory.held(account)]
    if found:
        raise ImportRefused(
            f"account {account.slug} already holds {' and '.join(found)}; an export imports "
            "into an empty account only."
        )


def _check_header(header: Fields | None, member: Member | None) -> None:
    if header is None:
        raise ImportRefused("the file is empty; it is not a Kit export.")
    line = header.number
    if header.type != KIND:
        raise ImportRefused(f"not a Kit export header (type {KIND!r}).", line=line)
    found = header.data.get("format")
    if found != FORMAT:
        raise ImportRefused(
            f"the export is in format {found!r}; this Kit reads format {FORMAT}.", line=line
        )
    if header.data.get("member") is not None and member is None:
        raise ImportRefused(
            f"the export holds the own business memory of {header.data['member']}; name the "
            "member of this account who receives it.",
            line=line,
        )


class _Importer:
    """Rows built from records and stored a batch at a time, with the map from the file's
    ids to the new ones."""

    def __init__(self, account: Account, member: Member | None) -> None:
        self.account, self.member = account, member
        self.counts: Counter[str] = Counter(dict.fromkeys(record_types(), 0))
        self._seats = _seats(account)
        self._ids: dict[tuple[str, str], uuid.UUID] = {}
        self._defined: dict[str, set[str]] = defaultdict(set)
        #: References not defined yet, with the line of the first record that made each.
        self._wanted: dict[str, dict[str, int]] = defaultdict(dict)
        self._dossiers: dict[str, Dossier] = {}
        self._dossier_times: dict[str, tuple[datetime, datetime]] = {}
        self._active: Counter[str] = Counter()
        self._shelves: set[tuple[str, int | None]] = set()
        #: Each entry's layer by its id in the file, the aliases to check against them,
        #: and the live entries of each layer (capacity).
        self._layers: dict[str, str] = {}
        self._statuses: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        #: Each note's company by its id in the file, and the notes each record names
        #: that must be of its company: (record's line, its company, the notes).
        self._companies: dict[str, str] = {}
        self._same_company: list[tuple[int, str, str, list[str]]] = []
        self._aliases: list[tuple[str, str, str, int]] = []
        #: Each entry's version by its id in the file, and its kept versions' numbers
        #: with the line of each.
        self._versions_of: dict[str, int] = {}
        self._kept: dict[str, dict[int, int]] = defaultdict(dict)
        self._live: Counter[tuple[str, int | None]] = Counter()
        self._pending: dict[type[Model], list[Model]] = defaultdict(list)

    def add(self, fields: Fields) -> None:
        build = {
            "dossier": self._dossier,
            "note": self._note,
            "compaction": self._compaction,
            "entry": self._entry,
            "entry_version": self._version,
        }.get(fields.type)
        if build is None:
            raise fields.refuse(f"unknown record type; this Kit reads {', '.join(record_types())}.")
        self._queue(build(fields))
        self.counts[fields.type] += 1

    # ids

    def _new_id(self, kind: str, old: str) -> uuid.UUID:
        return self._ids.setdefault((kind, old), uuid.uuid4())

    def _define(self, kind: str, fields: Fields) -> uuid.UUID:
        old = fields.ref("id")
        if old in self._defined[kind]:
            raise fields.refuse(f"id {old} is in the file twice.")
        self._defined[kind].add(old)
        return self._new_id(kind, old)

    def _refer(self, kind: str, old: str | None, fields: Fields) -> uuid.UUID | None:
        if old is None:
            return None
        if old not in self._defined[kind]:
            self._wanted[kind].setdefault(old, fields.number)
        return self._new_id(kind, old)

    def _seat(self, fields: Fields, name: str) -> int | None:
        person = fields.text(name, null=True)
        return self._seats.get(person.casefold()) if person else None

    # records

    def _dossier(self, fields: Fields) -> Dossier:
        domain = fields.text("domain")
        try:
            resolved = resolve_domain(domain).domain
        except KitError as error:
            raise fields.refuse(f"domain: {error.message}") from None
        if resolved != domain:
            raise fields.refuse(f"domain {domain!r} is not written as Kit keeps it ({resolved!r}).")
        if domain in self._dossiers:
            raise fields.refuse(f"the dossier of {domain} is in the file twice.")
        self._dossier_times[domain] = (fields.moment("created_at"), fields.moment("updated_at"))
        self._dossiers[domain] = Dossier(account=self.account, domain=domain)
        return self._dossiers[domain]

    def _dossier_id(self, fields: Fields) -> int:
        domain = fields.text("domain")
        dossier = self._dossiers.get(domain)
        if dossier is None:
            raise fields.refuse(f"no dossier record of {domain} comes before it.")
        if dossier.pk is None:
            self._store(Dossier)
        return dossier.pk

    def _note(self, fields: Fields) -> Note:
        status = fields.choice("status", Note.Status.values)
        fields.day("observed_at")  # a date of the years Kit keeps
        given = {
            "title": fields.text("title"),
            "body": fields.text("body"),
            "source_urls": fields.texts("source_urls"),
            "observed_at": fields.text("observed_at"),
        }
        try:
            cleaned = clean_note_input(**given)
        except KitError as error:
            raise fields.refuse(error.message) from None
        old_id, domain = fields.ref("id"), fields.text("domain")
        self._companies[old_id] = domain
        replaced_by = fields.ref("superseded_by", null=True)
        if replaced_by is not None:
            self._same_company.append((fields.number, domain, "superseded_by", [replaced_by]))
        note = Note(
            id=self._define("note", fields),
            account_id=self.account.pk,
            dossier_id=self._dossier_id(fields),
            status=status,
            source_urls=cleaned.source_urls,
            observed_at=cleaned.observed_at,
            created_at=fields.moment("created_at"),
            superseded_by_id=self._refer("note", fields.ref("superseded_by", null=True), fields),
            member_id=self._seat(fields, "member"),
        )
        note.title, note.body = cleaned.title, cleaned.body
        note.body_bytes = len(cleaned.body.encode())
        flags = note_flags(title=cleaned.title, body=cleaned.body, source_urls=cleaned.source_urls)
        _checked_again(note, flags, fields)
        if status == Note.Status.ACTIVE:
            domain = fields.text("domain")
            self._active[domain] += 1
            limit = notes_settings.DOMAIN_NOTE_LIMIT
            if self._active[domain] > limit:
                raise fields.refuse(f"{domain} would have over {limit} active notes, its limit.")
        return note

    def _compaction(self, fields: Fields) -> Compaction:
        domain = fields.text("domain")
        merged = fields.ref("merged_note", null=True)
        self._same_company.append(
            (fields.number, domain, "merged_note", [merged] if merged else [])
        )
        self._same_company.append(
            (fields.number, domain, "replaced_notes", fields.refs("replaced_notes"))
        )
        return Compaction(
            id=self._define("compaction", fields),
            account_id=self.account.pk,
            dossier_id=self._dossier_id(fields),
            merged_note_id=self._refer("note", fields.ref("merged_note", null=True), fields),
            # Notes deleted since the merge keep a place in the list, under new ids too.
            replaced_note_ids=[self._new_id("note", old) for old in fields.refs("replaced_notes")],
            expected_note_count=fields.integer("expected_note_count"),
            created_at=fields.moment("created_at"),
            member_id=self._seat(fields, "member"),
            restored_at=fields.moment("restored_at", null=True),
            restored_by_id=self._seat(fields, "restored_by"),
        )

    def _entry(self, fields: Fields) -> Entry:
        layer = fields.choice("layer", Layer.values)
        owner = None
        if layer == Layer.MEMBER:
            if self.member is None:
                raise fields.refuse(
                    "a member's own entry; name the member of this account who receives it."
                )
            owner = self.member.pk
        self._shelf(layer, owner)
        old_id = fields.ref("id")
        self._layers[old_id] = layer
        alias = fields.ref("alias_of", null=True)
        if alias is not None:
            self._aliases.append((old_id, alias, layer, fields.number))
        entry = Entry(
            id=self._define("entry", fields),
            account_id=self.account.pk,
            layer=layer,
            member_id=owner,
            key=fields.text("key"),
            version=fields.integer("version"),
            status=fields.choice("status", Entry.Status.values),
            alias_of_id=self._refer("entry", fields.ref("alias_of", null=True), fields),
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
            id=self._define("entry_version", fields),
            account_id=self.account.pk,
            entry_id=self._refer("entry", entry, fields),
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
        row.written_by_id = self._seat(fields, "written_by")
        label_length = type(row)._meta.get_field("written_by_label").max_length
        row.written_by_label = fields.label("written_by_label", max_length=label_length)
        key = row.key if isinstance(row, Entry) else self._keys[fields.ref("entry")]
        _checked_again(row, entry_flags(key, value, cleaned), fields)

    def _shelf(self, layer: str, owner: int | None) -> None:
        if (layer, owner) not in self._shelves:
            lock_shelf(Place(self.account.pk, layer, owner))
            self._shelves.add((layer, owner))

    # storing

    def _queue(self, row: Model) -> None:
        batch = self._pending[type(row)]
        batch.append(row)
        if len(batch) >= lifecycle_settings.EXPORT_BATCH_ROWS:
            self._store(type(row))

    def _store(self, model: type[Model]) -> None:
        rows = self._pending.pop(model, [])
        if rows:
            model.objects.bulk_create(rows)
        if model is Entry:
            promotion.schedule(rows)

    def flush(self) -> None:
        for model in (Dossier, Note, Compaction, Entry, EntryVersion):
            self._store(model)

    def finish(self) -> None:
        """Refuse a reference to a record the file does not hold, and records that do not
        fit together (``coherence``); then count each dossier's active notes and give it
        its times."""
        for kind, wanted in self._wanted.items():
            for old, number in wanted.items():
                if old not in self._defined[kind]:
                    raise ImportRefused(
                        f"names {kind} {old}, which the file does not hold.", line=number
                    )
        aliases_answer_for_live_entries(self._aliases, self._layers, self._statuses)
        kept_versions_fit(self._kept, self._versions_of)
        notes_keep_to_their_company(self._same_company, self._companies)
        dossiers = list(self._dossiers.values())
        for dossier in dossiers:
            dossier.active_note_count = self._active[dossier.domain]
            dossier.created_at, dossier.updated_at = self._dossier_times[dossier.domain]
        Dossier.objects.bulk_update(
            dossiers,
            ["active_note_count", "created_at", "updated_at"],
            batch_size=lifecycle_settings.EXPORT_BATCH_ROWS,
        )


def _checked_again(row: Note | Entry | EntryVersion, flags: list, fields: Fields) -> None:
    """The flags this Kit's checks find in the row's text (the file's are not trusted). A
    row they find nothing in keeps the file's times; one they flag waits for a person
    here, whatever the file says was reviewed."""
    file = fields.section("integrity")
    flagged_at = file.moment("flagged_at", null=True)
    reviewed_at = file.moment("reviewed_at", null=True)
    row.set_flags(flags, now=flagged_at if flags and flagged_at else None)
    row.integrity_reviewed_at = None if flags else reviewed_at


def _seats(account: Account) -> dict[str, int]:
    """The account's members by username and by email (case-folded)."""
    seats: dict[str, int] = {}
    rows = Member.objects.filter(account=account).values_list("pk", "user__username", "user__email")
    for pk, username, email in rows:
        for name in (username, email):
            if name:
                seats.setdefault(name.casefold(), pk)
    return seats
