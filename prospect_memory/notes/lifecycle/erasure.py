"""Prospect notes' part in erasures: a company's notes, compactions and audit events under
its dossier's lock, and a departing member's attributions."""

from __future__ import annotations

from django.db.models import Q

from outreach.access import Actor
from outreach.models import Account, Member
from prospect_memory.core.lifecycle.removing import (
    FORMER_MEMBER,
    forget_admin_log,
)
from prospect_memory.core.models import delete_in_account
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.services.dossiers import lock_dossier


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
    # Each statement names the account. Archived notes point at the note that replaced them
    # and compactions at their notes: all go, and the foreign keys are checked at commit.
    account_id = dossier.account_id
    delete_in_account(Compaction, account_id, dossier=dossier)
    delete_in_account(Note, account_id, dossier=dossier)
    delete_in_account(Dossier, account_id, pk=dossier.pk)
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
