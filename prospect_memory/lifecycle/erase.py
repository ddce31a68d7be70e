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
from pgreplicas.routing import forget_writer
from prospect_memory.core.lifecycle import lifecycles
from prospect_memory.core.lifecycle.removing import (
    FORMER_MEMBER,
    content_types,
    forget_admin_log,
    summed,
)
from prospect_memory.core.models import Erasure, UsageEvent
from prospect_memory.notes.domains import resolve_domain


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


# --- a company -------------------------------------------------------------------------------


def company_footprint(actor: Actor, domain: str) -> dict[str, int]:
    """What erasing ``domain`` (resolved) would remove from the actor's account, by kind."""
    account = actor.account
    usage = UsageEvent.objects.filter(account=account, subject=domain).count()
    return summed(
        *(memory.company_footprint(account, domain) for memory in lifecycles()),
        {"usage_events": usage},
    )


def erase_company(*, actor: Actor, domain: object) -> Erased:
    """Forget everything the actor's account knows about the company at ``domain``: what
    each memory keeps of it (the notes: the company's notes, active and archived,
    compactions, their vectors and the audit events that name it, under the dossier's
    lock that every save of the domain takes), and the usage events that name it."""
    require_module_admin(actor)
    resolved = resolve_domain(domain).domain
    account = actor.account
    with transaction.atomic():
        erased = [memory.erase_company(actor, resolved) for memory in lifecycles()]
        usage, _ = UsageEvent.objects.filter(account=account, subject=resolved).delete()
        counts = summed(*erased, {"usage_events": usage})
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
        counts = summed(*(memory.member_leaving(member, names) for memory in lifecycles()))
        counts["tokens_revoked"] = _revoke_tokens(member.user_id, account_id)
        forget_writer(account_id, member.pk)  # where their writes reached (read replicas)
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
            content_type__in=content_types(model), object_id__in=rows.values("pk_text")
        ).delete()
        deleted += count
    return deleted


def erase_account(account: Account, *, by: str) -> Erased:
    """Everything of ``account``: every row of every app that carries it (in one
    transaction; the database checks the foreign keys at commit), its tokens, its seats and
    the account itself. Users stay: a person may hold seats elsewhere."""
    account_id = account.pk
    with transaction.atomic():
        # Every memory's locks first, as its writers take them: a write under way
        # finishes first, and the deletion never waits on a write that waits on a row.
        for memory in lifecycles():
            memory.lock_account(account_id)
        counts = {"tokens_revoked": _revoke_tokens(None, account_id)}
        forget_writer(account_id)  # where its members' writes reached (read replicas)
        tenant_models = _account_models()
        counts["admin_log_entries"] = _forget_admin_log_of_account(
            tenant_models, account_id
        ) + forget_admin_log(Account, [account_id])
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
