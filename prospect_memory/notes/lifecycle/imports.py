"""Prospect notes' side of an import: dossiers, notes and compactions, each checked as a save
would check it (the per-company cap included), and what they must say of each other once
all are read (a file can be edited and given a new checksum)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime

from django.db.models import Model

from outreach.errors import KitError
from outreach.models import Account
from prospect_memory.core.lifecycle.fields import Fields, ImportRefused
from prospect_memory.core.lifecycle.importing import ImportSession, checked_again
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.models import Compaction, Dossier, Note
from prospect_memory.notes.rules import clean_note_input, note_flags


def held(account: Account) -> list[str]:
    found = {
        "dossiers": Dossier.objects.filter(account=account).exists(),
        "notes": Note.objects.filter(account=account).exists(),
    }
    return [name for name, present in found.items() if present]


class NotesImporter:
    """The notes' side of one import: dossiers, notes and compactions, each checked as a
    save would check it, the per-company cap included."""

    models: tuple[type[Model], ...] = (Dossier, Note, Compaction)

    def __init__(self, session: ImportSession) -> None:
        self.session = session
        self.builders: dict[str, Callable[[Fields], Model]] = {
            "dossier": self._dossier,
            "note": self._note,
            "compaction": self._compaction,
        }
        self._dossiers: dict[str, Dossier] = {}
        self._dossier_times: dict[str, tuple[datetime, datetime]] = {}
        self._active: Counter[str] = Counter()
        #: Each note's company by its id in the file, and the notes each record names
        #: that must be of its company: (record's line, its company, the field, the notes).
        self._companies: dict[str, str] = {}
        self._same_company: list[tuple[int, str, str, list[str]]] = []
        #: The note that replaced each archived note, with the line that says so.
        self._replaced_by: dict[str, tuple[str, int]] = {}

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
        self._dossiers[domain] = Dossier(account=self.session.account, domain=domain)
        return self._dossiers[domain]

    def _dossier_id(self, fields: Fields) -> int:
        domain = fields.text("domain")
        dossier = self._dossiers.get(domain)
        if dossier is None:
            raise fields.refuse(f"no dossier record of {domain} comes before it.")
        if dossier.pk is None:
            self.session.store(Dossier)
        return dossier.pk

    def _note(self, fields: Fields) -> Note:
        session = self.session
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
            if replaced_by == old_id:
                raise fields.refuse(
                    "superseded_by names the note itself; a note is replaced by another.",
                    field="superseded_by",
                )
            self._same_company.append((fields.number, domain, "superseded_by", [replaced_by]))
            self._replaced_by[old_id] = (replaced_by, fields.number)
        note = Note(
            id=session.define("note", fields),
            account_id=session.account.pk,
            dossier_id=self._dossier_id(fields),
            status=status,
            source_urls=cleaned.source_urls,
            observed_at=cleaned.observed_at,
            created_at=fields.moment("created_at"),
            superseded_by_id=session.refer("note", replaced_by, fields),
            member_id=session.seat(fields, "member"),
        )
        note.title, note.body = cleaned.title, cleaned.body
        note.body_bytes = len(cleaned.body.encode())
        flags = note_flags(title=cleaned.title, body=cleaned.body, source_urls=cleaned.source_urls)
        checked_again(note, flags, fields)
        if status == Note.Status.ACTIVE:
            self._active[domain] += 1
            limit = notes_settings.DOMAIN_NOTE_LIMIT
            if self._active[domain] > limit:
                raise fields.refuse(f"{domain} would have over {limit} active notes, its limit.")
        return note

    def _compaction(self, fields: Fields) -> Compaction:
        session = self.session
        domain = fields.text("domain")
        merged = fields.ref("merged_note", null=True)
        self._same_company.append(
            (fields.number, domain, "merged_note", [merged] if merged else [])
        )
        replaced = fields.refs("replaced_notes")
        if len(set(replaced)) != len(replaced):
            raise fields.refuse(
                "replaced_notes names a note twice; a compaction replaces each note once.",
                field="replaced_notes",
            )
        self._same_company.append((fields.number, domain, "replaced_notes", replaced))
        return Compaction(
            id=session.define("compaction", fields),
            account_id=session.account.pk,
            dossier_id=self._dossier_id(fields),
            merged_note_id=session.refer("note", merged, fields),
            # Notes deleted since the merge keep a place in the list, under new ids too.
            replaced_note_ids=[
                session.new_id("note", old) for old in fields.refs("replaced_notes")
            ],
            expected_note_count=fields.integer("expected_note_count"),
            created_at=fields.moment("created_at"),
            member_id=session.seat(fields, "member"),
            restored_at=fields.moment("restored_at", null=True),
            restored_by_id=session.seat(fields, "restored_by"),
        )

    def stored(self, model: type[Model], rows: list[Model]) -> None:
        pass

    def finish(self) -> None:
        """Refuse notes named across companies; then count each dossier's active notes and
        give it its times."""
        _notes_keep_to_their_company(self._same_company, self._companies)
        _replacements_end(self._replaced_by)
        dossiers = list(self._dossiers.values())
        for dossier in dossiers:
            dossier.active_note_count = self._active[dossier.domain]
            dossier.created_at, dossier.updated_at = self._dossier_times[dossier.domain]
        Dossier.objects.bulk_update(
            dossiers,
            ["active_note_count", "created_at", "updated_at"],
            batch_size=self.session.batch_rows,
        )


def _notes_keep_to_their_company(
    named: list[tuple[int, str, str, list[str]]], companies: dict[str, str]
) -> None:
    """A note replaced by a note, and the notes a compaction names (each: the record's line,
    its company, the field, the notes), are of the record's own company: a restore would
    otherwise move notes between dossiers, past their cap (a file can be edited and given
    a new checksum)."""
    for line, domain, field, notes in named:
        for note in notes:
            other = companies.get(note)
            if other is not None and other != domain:
                raise ImportRefused(
                    f"{field} names note {note} of {other}; a record of {domain} names notes "
                    f"of {domain} only.",
                    line=line,
                    field=field,
                )


def _replacements_end(replaced_by: dict[str, tuple[str, int]]) -> None:
    """Following the notes that replaced a note ends at a note nothing replaced: a loop
    would leave archived notes no compaction names, which nothing ever removes."""
    done: set[str] = set()
    for start in replaced_by:
        path: list[str] = []
        note: str | None = start
        while note is not None and note not in done:
            if note in path:
                _, line = replaced_by[note]
                raise ImportRefused(
                    f"note record: superseded_by runs in a loop back to note {note}; a "
                    "chain of replacements ends at a note nothing replaced.",
                    line=line,
                    field="superseded_by",
                )
            path.append(note)
            note = replaced_by[note][0] if note in replaced_by else None
        done.update(path)
