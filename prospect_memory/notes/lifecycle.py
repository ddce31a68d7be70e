"""Prospect notes' part in an account's lifecycle (SPEC 16), registered at ``ready()``
(:mod:`prospect_memory.core.lifecycle`): their records in an export and read back from one,
a company's erasure, a departing member's attributions, and the retention of audit events
and archived notes.

Records, in this order: ``dossier`` (one per company domain), ``note`` (active and
archived) and ``compaction``. Texts are decrypted; a note names the note that replaced it
(``superseded_by``) and a compaction its notes (``merged_note``, ``replaced_notes``) by the
exporting Kit's ids, and each names its dossier by ``domain``.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Model, Q

from outreach.access import Actor
from outreach.errors import KitError
from outreach.models import Account, Member
from prospect_memory.core.lifecycle import ExportScope, MemoryLifecycle, RetentionScope
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
from prospect_memory.notes.conf import notes_settings
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.rules import clean_note_input, note_flags
from prospect_memory.notes.services.dossiers import lock_dossier

DOSSIER_COLUMNS = ("id", "domain", "active_note_count", "created_at", "updated_at")
NOTE_COLUMNS = (
    "id",
    "dossier__domain",
    "status",
    "title_ciphertext",
    "body_ciphertext",
    "source_urls",
    "observed_at",
    "created_at",
    "superseded_by_id",
    "member__user__username",
    "oauth_application__name",
    *FLAG_COLUMNS,
)
COMPACTION_COLUMNS = (
    "id",
    "dossier__domain",
    "merged_note_id",
    "replaced_note_ids",
    "expected_note_count",
    "created_at",
    "member__user__username",
    "oauth_application__name",
    "restored_at",
    "restored_by__user__username",
)


def records(scope: ExportScope) -> Iterator[dict[str, Any]]:
    account = scope.account
    owner = account.pk
    dossiers = Dossier.objects.filter(account=account)
    for row in pages(dossiers, DOSSIER_COLUMNS, ("domain",), scope.batch_rows):
        yield _dossier_record(row)
    notes = Note.objects.filter(account=account)
    for row in pages(
        notes, NOTE_COLUMNS, ("dossier_id", "status", "-observed_at", "id"), scope.batch_rows
    ):
        yield _note_record(row, owner)
    compactions = Compaction.objects.filter(account=account)
    order = ("dossier_id", "-created_at", "id")
    for row in pages(compactions, COMPACTION_COLUMNS, order, scope.batch_rows):
        yield _compaction_record(row)


def held(account: Account) -> list[str]:
    found = {
        "dossiers": Dossier.objects.filter(account=account).exists(),
        "notes": Note.objects.filter(account=account).exists(),
    }
    return [name for name, present in found.items() if present]


def _dossier_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "dossier",
        "domain": row["domain"],
        "active_note_count": row["active_note_count"],
        "created_at": moment(row["created_at"]),
        "updated_at": moment(row["updated_at"]),
    }


def _note_record(row: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {
        "type": "note",
        "id": ref(row["id"]),
        "domain": row["dossier__domain"],
        "status": row["status"],
        "title": opened(Note, "title", account_id, row),
        "body": opened(Note, "body", account_id, row),
        "source_urls": row["source_urls"],
        "observed_at": moment(row["observed_at"]),
        "created_at": moment(row["created_at"]),
        "superseded_by": ref(row["superseded_by_id"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "integrity": integrity(Note, account_id, row),
    }


def _compaction_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "compaction",
        "id": ref(row["id"]),
        "domain": row["dossier__domain"],
        "merged_note": ref(row["merged_note_id"]),
        "replaced_notes": [str(note_id) for note_id in row["replaced_note_ids"]],
        "expected_note_count": row["expected_note_count"],
        "created_at": moment(row["created_at"]),
        "member": row["member__user__username"],
        "client": row["oauth_application__name"],
        "restored_at": moment(row["restored_at"]),
        "restored_by": row["restored_by__user__username"],
    }


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
            self._same_company.append((fields.number, domain, "superseded_by", [replaced_by]))
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
        self._same_company.append(
            (fields.number, domain, "replaced_notes", fields.refs("replaced_notes"))
        )
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


# --- erasures -----------------------------------------------------------------------------


def company_footprint(account: Account, domain: str) -> dict[str, int]:
    """What erasing ``domain`` (resolved) would remove of the account's notes, by kind."""
    notes = Note.objects.filter(account=account, dossier__domain=domain)
    return {
        "notes": notes.filter(status=Note.Status.ACTIVE).count(),
        "archived_notes": notes.filter(status=Note.Status.ARCHIVED).count(),
        "compactions": Compaction.objects.filter(account=account, dossier__domain=domain).count(),
        "audit_events": AuditEvent.objects.filter(account=account, domain=domain).count(),
    }


def erase_company(actor: Actor, domain: str) -> dict[str, int]:
    """The company's notes (active and archived), compactions, their vectors (the knowledge
    index reads the notes' own), and the audit events that name the domain.

    The company's dossier row is locked first, as every save, compaction and delete of the
    domain locks it: a save that started before waits, then writes into an empty dossier;
    nothing written before the erasure survives it. It is created if missing, then erased:
    a first save of the domain already on its way waits on this row too.
    """
    dossier = lock_dossier(actor, domain, create=True)
    assert dossier is not None  # created when missing
    notes = Note.objects.filter(account_id=dossier.account_id, dossier=dossier)
    compactions = Compaction.objects.filter(account_id=dossier.account_id, dossier=dossier)
    note_ids = list(notes.values_list("id", flat=True))
    archived = notes.filter(status=Note.Status.ARCHIVED).count()
    compaction_ids = list(compactions.values_list("id", flat=True))
    admin_log = (
        forget_admin_log(Note, note_ids)
        + forget_admin_log(Compaction, compaction_ids)
        + forget_admin_log(Dossier, [dossier.pk])
    )
    # Archived notes point at the note that replaced them: deleted in one statement, the
    # order within the dossier does not matter.
    notes.delete()
    compactions.delete()
    dossier.delete()
    audit_events, _ = AuditEvent.objects.filter(account=actor.account, domain=domain).delete()
    return {
        "notes": len(note_ids) - archived,
        "archived_notes": archived,
        "compactions": len(compaction_ids),
        "admin_log_entries": admin_log,
        "audit_events": audit_events,
    }


def member_leaving(member: Member, names: set[str]) -> dict[str, int]:
    """Notes are the account's: what the member wrote stays, named by no one."""
    account_id = member.account_id
    by_name = Q(member=member) | Q(actor__in=names)
    AuditEvent.objects.filter(account_id=account_id).filter(by_name).update(
        member=None, actor=FORMER_MEMBER
    )
    Note.objects.filter(account_id=account_id, member=member).update(member=None)
    Compaction.objects.filter(account_id=account_id, member=member).update(member=None)
    Compaction.objects.filter(account_id=account_id, restored_by=member).update(restored_by=None)
    return {}


# --- retention ----------------------------------------------------------------------------


def retain(scope: RetentionScope) -> dict[str, int]:
    """Audit events past their days, and compactions past the archived notes' days made
    final."""
    removed: dict[str, int] = {}
    if scope.days.get("audit_events"):
        cutoff = scope.now - timedelta(days=scope.days["audit_events"])
        removed["audit_events"] = delete_in_batches(
            AuditEvent.objects.filter(created_at__lt=cutoff), scope.batch_rows
        )
    if scope.days.get("archived_notes"):
        cutoff = scope.now - timedelta(days=scope.days["archived_notes"])
        removed["archived_notes"] = _archived_notes_before(cutoff, scope.batch_rows)
    return removed


def _archived_notes_before(cutoff: datetime, batch_rows: int) -> int:
    """Compactions older than ``cutoff`` become final: the notes each archived go, and so
    does the record that could bring them back. One compaction at a time, its dossier locked
    as an undo locks it; a compaction already undone only loses its record (the notes it
    listed are active again, or archived by a later compaction that can still be undone)."""
    deleted = 0
    while True:
        old = list(
            Compaction.objects.filter(created_at__lt=cutoff)
            .order_by("created_at")
            .values_list("pk", flat=True)[:batch_rows]
        )
        if not old:
            return deleted
        for pk in old:
            deleted += _make_final(pk)


def _make_final(compaction_id: uuid.UUID) -> int:
    with transaction.atomic():
        compaction = Compaction.objects.select_related("dossier").filter(pk=compaction_id).first()
        if compaction is None:
            return 0
        Dossier.objects.select_for_update().filter(pk=compaction.dossier_id).first()
        compaction = Compaction.objects.select_for_update().filter(pk=compaction_id).first()
        if compaction is None:
            return 0
        gone = 0
        if compaction.restored_at is None and compaction.merged_note_id is not None:
            gone, _ = Note.objects.filter(
                account_id=compaction.account_id,
                pk__in=compaction.replaced_note_ids,
                superseded_by_id=compaction.merged_note_id,
                status=Note.Status.ARCHIVED,
            ).delete()
        compaction.delete()
        return gone


LIFECYCLE = MemoryLifecycle(
    name="notes",
    record_types=("dossier", "note", "compaction"),
    records=records,
    held=held,
    importer=NotesImporter,
    company_footprint=company_footprint,
    erase_company=erase_company,
    member_leaving=member_leaving,
    retain=retain,
)
