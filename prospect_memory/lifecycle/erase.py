"""Erasures (SPEC 16): a company, a member who leaves, an account. Each reaches every copy
(rows, archived notes, versions, evictions, aliases, vectors, the knowledge index, events
and their text, Django admin's log), is recorded as an :class:`Erasure` (who, when, counts,
never content) and cannot be undone.

The erased subject is named in the record only by a keyed digest (:func:`subject_digest`):
whether a given domain was erased can be checked, the table does not list them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction
from django.db.models import Q
from django.db.models.functions import Cast
from django.utils.crypto import salted_hmac
from oauth2_provider.models import get_access_token_model, get_grant_model, get_refresh_token_model

from outreach.access import Actor, require_module_admin
from outreach.models import (
    Account,
    Member,
    OAuthAccessTokenAccount,
    OAuthGrantAccount,
    OAuthRefreshTokenAccount,
)
from prospect_memory.business.access import Place
from prospect_memory.business.models import Entry, EntryEvent, EntryVersion, Layer, Shelf
from prospect_memory.business.services.lock import lock_shelf
from prospect_memory.core.models import Erasure, UsageEvent
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.models import AuditEvent, Compaction, Dossier, Note
from prospect_memory.notes.services.dossiers import lock_dossier

#: What rows written by a member who left are attributed to.
FORMER_MEMBER = "a former member"


@dataclass(frozen=True)
class Erased:
    kind: str
    #: Rows removed, by what they were.
    counts: dict[str, int]
    erasure_id: int

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def subject_digest(account_id: int, subject: str) -> str:
    """The keyed digest an erasure keeps instead of its subject."""
    return salted_hmac("kit.erasure", f"{account_id}:{subject}", algorithm="sha256").hexdigest()


def _record(kind: str, account_id: int, subject: str, by: str, counts: dict[str, int]) -> Erased:
    erasure = Erasure.objects.create(
        kind=kind,
        account_ref=account_id,
        subject_digest=subject_digest(account_id, subject),
        actor=by,
        counts=counts,
    )
    return Erased(kind=kind, counts=counts, erasure_id=erasure.pk)


def _content_types(model: type[models.Model]) -> list[ContentType]:
    """The content types the admin logs rows of ``model`` under: its own and its proxies'."""
    kinds = [m for m in apps.get_models() if m._meta.concrete_model is model]
    return list(ContentType.objects.get_for_models(*kinds, for_concrete_models=False).values())


def _forget_admin_log(model: type[models.Model], ids: Iterable[object]) -> int:
    """Django admin's log entries about these rows (their ids and names are text there)."""
    ids = [str(pk) for pk in ids]
    if not ids:
        return 0
    deleted, _ = LogEntry.objects.filter(
        content_type__in=_content_types(model), object_id__in=ids
    ).delete()
    return deleted


# --- a company -------------------------------------------------------------------------------


def _erase_dossier(dossier: Dossier) -> dict[str, int]:
    notes = Note.objects.filter(account_id=dossier.account_id, dossier=dossier)
    compactions = Compaction.objects.filter(account_id=dossier.account_id, dossier=dossier)
    note_ids = list(notes.values_list("id", flat=True))
    archived = notes.filter(status=Note.Status.ARCHIVED).count()
    compaction_ids = list(compactions.values_list("id", flat=True))
    admin_log = (
        _forget_admin_log(Note, note_ids)
        + _forget_admin_log(Compaction, compaction_ids)
        + _forget_admin_log(Dossier, [dossier.pk])
    )
    # Archived notes point at the note that replaced them: deleted in one statement, the
    # order within the dossier does not matter.
    notes.delete()
    compactions.delete()
    dossier.delete()
    return {
        "notes": len(note_ids) - archived,
        "archived_notes": archived,
        "compactions": len(compaction_ids),
        "admin_log_entries": admin_log,
    }


def company_footprint(actor: Actor, domain: str) -> dict[str, int]:
    """What erasing ``domain`` (resolved) would remove from the actor's account, by kind."""
    account = actor.account
    notes = Note.objects.filter(account=account, dossier__domain=domain)
    return {
        "notes": notes.filter(status=Note.Status.ACTIVE).count(),
        "archived_notes": notes.filter(status=Note.Status.ARCHIVED).count(),
        "compactions": Compaction.objects.filter(account=account, dossier__domain=domain).count(),
        "audit_events": AuditEvent.objects.filter(account=account, domain=domain).count(),
        "usage_events": UsageEvent.objects.filter(account=account, subject=domain).count(),
    }


def erase_company(*, actor: Actor, domain: object) -> Erased:
    """Forget everything the actor's account knows about the company at ``domain``: its
    notes (active and archived), compactions, their vectors (the knowledge index reads the
    notes' own), the audit events and usage events that name the domain.

    The company's dossier row is locked first, as every save, compaction and delete of the
    domain locks it: a save that started before waits, then writes into an empty dossier;
    nothing written before the erasure survives it.
    """
    require_module_admin(actor)
    resolved = resolve_domain(domain).domain
    account = actor.account
    with transaction.atomic():
        # Created if missing, then erased: a first save of the domain already on its way
        # waits on this row too.
        dossier = lock_dossier(actor, resolved, create=True)
        counts = _erase_dossier(dossier)
        counts["audit_events"], _ = AuditEvent.objects.filter(
            account=account, domain=resolved
        ).delete()
        counts["usage_events"], _ = UsageEvent.objects.filter(
            account=account, subject=resolved
        ).delete()
        return _record(Erasure.Kind.COMPANY, account.pk, resolved, actor.label, counts)


# --- a member who leaves -----------------------------------------------------------------------


def _revoke_tokens(user_id: int | None, account_id: int) -> int:
    """The OAuth tokens and codes bound to the account (and to one user, when given)."""
    access = get_access_token_model().objects.filter(
        pk__in=OAuthAccessTokenAccount.objects.filter(account_id=account_id).values(
            "access_token_id"
        )
    )
    grants = get_grant_model().objects.filter(
        pk__in=OAuthGrantAccount.objects.filter(account_id=account_id).values("grant_id")
    )
    refresh = get_refresh_token_model().objects.filter(
        Q(access_token__in=access)
        | Q(
            pk__in=OAuthRefreshTokenAccount.objects.filter(account_id=account_id).values(
                "refresh_token_id"
            )
        )
    )
    if user_id is not None:
        access, grants = access.filter(user_id=user_id), grants.filter(user_id=user_id)
        refresh = refresh.filter(user_id=user_id)
    revoked, _ = refresh.delete()
    count, _ = access.delete()
    granted, _ = grants.delete()
    return revoked + count + granted


def member_leaving(member: Member, *, by: str) -> Erased:
    """Erase what is the member's own in their account before their seat goes: their own
    context (entries with their versions, evictions, aliases and vectors; the events that
    name its keys) and their tokens for the account. What they wrote for the account stays
    the account's, attributed to :data:`FORMER_MEMBER`.

    Runs in the transaction that removes the seat (a ``pre_delete`` of the membership, so
    the admin, a user's deletion and deactivation all take this path; an account's erasure
    removes its seats with everything else, without it).
    """
    account_id = member.account_id
    names = {member.user.get_username(), member.user.email} - {""}
    with transaction.atomic():
        # Their own layer's writes wait, as every write of a layer waits on its shelf.
        lock_shelf(Place(account_id, Layer.MEMBER, member.pk))
        own = Entry.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member)
        own_ids = list(own.values_list("id", flat=True))
        # Every entry they ever had was stored by them once: Kit's own events about it (an
        # eviction, a merge) name it by id even after the entry is gone.
        own_events = EntryEvent.objects.filter(account_id=account_id, layer=Layer.MEMBER)
        ever_ids = {
            *own_ids,
            *own_events.filter(member=member)
            .exclude(entry_id=None)
            .values_list("entry_id", flat=True),
        }
        counts = {
            "own_entries": len(own_ids),
            "own_versions": EntryVersion.objects.filter(entry_id__in=own_ids).count(),
        }
        counts["own_events"], _ = own_events.filter(
            Q(member=member) | Q(entry_id__in=ever_ids)
        ).delete()
        counts["admin_log_entries"] = _forget_admin_log(Entry, ever_ids)
        own.delete()
        Shelf.objects.filter(account_id=account_id, layer=Layer.MEMBER, member=member).delete()
        counts["tokens_revoked"] = _revoke_tokens(member.user_id, account_id)
        # What stays the account's no longer names them.
        by_name = Q(member=member) | Q(actor__in=names)
        for event in (AuditEvent, EntryEvent):
            event.objects.filter(account_id=account_id).filter(by_name).update(
                member=None, actor=FORMER_MEMBER
            )
        written = Q(written_by=member) | Q(written_by_label__in=names)
        for row in (Entry, EntryVersion):
            row.objects.filter(account_id=account_id).filter(written).update(
                written_by=None, written_by_label=FORMER_MEMBER
            )
        Note.objects.filter(account_id=account_id, member=member).update(member=None)
        Compaction.objects.filter(account_id=account_id, member=member).update(member=None)
        Compaction.objects.filter(account_id=account_id, restored_by=member).update(
            restored_by=None
        )
        Erasure.objects.filter(account_ref=account_id, actor__in=names).update(actor=FORMER_MEMBER)
        return _record(Erasure.Kind.MEMBER, account_id, f"member:{member.pk}", by, counts)


# --- an account --------------------------------------------------------------------------------


def _account_models() -> list[type[models.Model]]:
    """Every concrete model of every installed app with a foreign key to the account."""
    found = []
    for model in apps.get_models():
        if model._meta.proxy or model is Account:
            continue
        for field in model._meta.concrete_fields:
            if field.is_relation and field.many_to_one and field.related_model is Account:
                found.append(model)
                break
    return found


def _forget_admin_log_of_account(model_list: Iterable[type[models.Model]], account_id: int) -> int:
    """Admin log entries about the account's rows of these models (read before they go)."""
    deleted = 0
    for model in model_list:
        rows = model._base_manager.filter(account_id=account_id).annotate(
            pk_text=Cast("pk", models.TextField())
        )
        count, _ = LogEntry.objects.filter(
            content_type__in=_content_types(model), object_id__in=rows.values("pk_text")
        ).delete()
        deleted += count
    return deleted


def erase_account(account: Account, *, by: str) -> Erased:
    """Everything of ``account``: every row of every app that carries it (in one
    transaction; the database checks the foreign keys at commit), its tokens, its seats and
    the account itself. Users stay: a person may hold seats elsewhere."""
    account_id = account.pk
    with transaction.atomic():
        # Every layer's lock first, in id order, as each writer of a layer takes its own:
        # a store under way finishes first, and the deletion of entries (which updates
        # their shelves' counts) never waits on a store that waits on an entry.
        list(Shelf.objects.filter(account_id=account_id).select_for_update().order_by("id"))
        counts = {"tokens_revoked": _revoke_tokens(None, account_id)}
        tenant_models = _account_models()
        counts["admin_log_entries"] = _forget_admin_log_of_account(
            tenant_models, account_id
        ) + _forget_admin_log(Account, [account_id])
        # Every row that carries the account, seats included (so no seat's own erasure
        # runs: its rows go with the rest), in one statement per table.
        for model in tenant_models:
            rows = model._base_manager.filter(account_id=account_id)
            deleted = rows._raw_delete(rows.db)
            if deleted:
                counts[model._meta.label_lower] = deleted
        # The account, through the ORM: whatever else points at it goes too.
        Account.objects.filter(pk=account_id).delete()
        return _record(Erasure.Kind.ACCOUNT, account_id, "account", by, counts)
