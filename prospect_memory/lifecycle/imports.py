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
for the embedding backfill, as rows saved while the provider was down do.

The file, its header, manifest and transaction are the lifecycle's; each record goes to the
memory that exports its type (``prospect_memory.core.lifecycle``), which checks it and
builds its row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.db import DatabaseError, transaction

from outreach.models import Account, Member
from prospect_memory.core.lifecycle import HEADER, lifecycles, record_types
from prospect_memory.core.lifecycle.fields import Fields, ImportRefused
from prospect_memory.core.lifecycle.importing import ImportSession
from prospect_memory.lifecycle.conf import lifecycle_settings
from prospect_memory.lifecycle.export import FORMAT
from prospect_memory.lifecycle.lines import Stream


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
    if header.type != HEADER:
        raise ImportRefused(f"not a Kit export header (type {HEADER!r}).", line=line)
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
    """The records of one import, each handed to the memory whose record type it is; the
    rows they become stored a batch at a time, each memory's in its order."""

    def __init__(self, account: Account, member: Member | None) -> None:
        self.counts: Counter[str] = Counter(dict.fromkeys(record_types(), 0))
        self.session = ImportSession(
            account, member, batch_rows=lifecycle_settings.EXPORT_BATCH_ROWS
        )
        self.memories = [memory.importer(self.session) for memory in lifecycles()]
        self.builders = {}
        for memory, importer in zip(lifecycles(), self.memories, strict=True):
            strays = set(importer.builders) - set(memory.record_types)
            if strays:  # each record goes to the memory that exports its type, none other
                raise ValueError(
                    f"memory {memory.name!r} builds records it does not export: "
                    f"{', '.join(sorted(strays))}"
                )
            self.builders.update(importer.builders)
            for model in importer.models:
                self.session.after_store(model, importer.stored)

    def add(self, fields: Fields) -> None:
        build = self.builders.get(fields.type)
        if build is None:
            raise fields.refuse(f"unknown record type; this Kit reads {', '.join(record_types())}.")
        self.session.queue(build(fields))
        self.counts[fields.type] += 1

    def flush(self) -> None:
        for importer in self.memories:
            for model in importer.models:
                self.session.store(model)

    def finish(self) -> None:
        """Refuse a reference to a record the file does not hold, then ask each memory to
        check what its records say of each other and complete them."""
        self.session.check_references()
        for importer in self.memories:
            importer.finish()
