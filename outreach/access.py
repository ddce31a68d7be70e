"""Who is acting, for which account, and what the account and role allow.

Every write and read of prospect memory takes an :class:`Actor`. The rules here are the
product's, shared by every interface (MCP, REST, pages, admin): the Outreach add-on and an
active subscription for anything an agent or member does, module admin for writes. Staff
moderating in Django admin act on an account without being its members.

Each check has one owner on a call: ``outreach.operations.execute``, which every adapter
(MCP, REST, pages) goes through, checks the account and the role once and hands the
operation an actor *vouched* for them (:meth:`Actor.vouched_for`); a service that checks
again for its own direct callers (the admin, commands) finds the vouch and does not repeat
the work. A vouch lives on that one call's actor, for that account and member only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from outreach.errors import AccountClosed, AddonRequired, NotModuleAdmin, SubscriptionInactive
from outreach.models import Account, Member


@dataclass(frozen=True)
class Actor:
    account: Account
    member: Member | None = None
    #: The OAuth client the request came through, when it came over MCP/OAuth.
    oauth_application: Any = None
    #: A Kit staff user moderating in Django admin.
    staff_user: Any = None
    #: The checks this call's owner has passed for this actor (:data:`OUTREACH`, a role).
    vouched: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    def vouched_for(self, *checks: str) -> Actor:
        """This actor, with ``checks`` passed (only the call's owner says so)."""
        return replace(self, vouched=self.vouched | frozenset(checks))

    @classmethod
    def for_member(cls, member: Member, *, oauth_application: Any = None) -> Actor:
        return cls(account=member.account, member=member, oauth_application=oauth_application)

    @classmethod
    def for_staff(cls, user: Any, account: Account) -> Actor:
        if not (user and user.is_active and user.is_staff):
            raise NotModuleAdmin("only Kit staff may moderate research in the admin")
        return cls(account=account, staff_user=user)

    @property
    def label(self) -> str:
        user = self.member.user if self.member else self.staff_user
        return user.get_username() if user else ""

    @property
    def is_staff(self) -> bool:
        return self.member is None and self.staff_user is not None


def require_outreach(actor: Actor) -> None:
    """The account must have the Outreach add-on and an active subscription."""
    if actor.is_staff or OUTREACH in actor.vouched:
        return
    check_outreach(actor.account)


def check_outreach(account: Account) -> None:
    """:func:`require_outreach`'s check itself (its one run per call is counted in tests)."""
    if not account.outreach_addon:
        raise AddonRequired(
            f"Account '{account.slug}' does not have the Outreach add-on, which prospect "
            "memory is part of. An account owner can add it under Billing; then try again.",
            details={"account": account.slug},
        )
    if account.subscription_status != Account.Subscription.ACTIVE:
        raise SubscriptionInactive(
            f"Account '{account.slug}' has a {account.subscription_status.replace('_', ' ')} "
            "subscription. An account owner can bring billing up to date; then try again.",
            details={"account": account.slug, "subscription": account.subscription_status},
        )


def require_open(actor: Actor) -> None:
    """A closed account keeps what it has until it is erased (SPEC 16): nothing new."""
    account = actor.account
    if account.closed_at is not None:
        raise AccountClosed(
            f"Account '{account.slug}' was closed on {account.closed_at:%Y-%m-%d}: its memories "
            "can be read and exported until they are erased, not changed. An account owner "
            "can reopen it; then try again.",
            details={"account": account.slug, "closed_at": account.closed_at.isoformat()},
        )


MEMBER = "member"
MODULE_ADMIN = "module_admin"
#: The account's access (the add-on and an active subscription), as a vouched check.
OUTREACH = "outreach"


def require_role(actor: Actor, role: str) -> None:
    """Refuse unless the actor may act with ``role`` (``MEMBER`` or ``MODULE_ADMIN``)."""
    if role == MODULE_ADMIN:
        require_module_admin(actor)
    elif role == MEMBER:
        require_outreach(actor)
    else:
        raise ValueError(f"unknown role {role!r}")


def is_module_admin(actor: Actor) -> bool:
    """An Outreach module admin of the account (or Kit staff moderating)."""
    return actor.is_staff or (actor.member is not None and actor.member.is_module_admin)


def require_module_admin(actor: Actor) -> None:
    """Writes need an Outreach module admin (or Kit staff moderating)."""
    if MODULE_ADMIN in actor.vouched:
        return
    require_outreach(actor)
    check_module_admin(actor)


def check_module_admin(actor: Actor) -> None:
    """:func:`require_module_admin`'s own check, once the account's access is known."""
    if not is_module_admin(actor):
        raise NotModuleAdmin(
            f"This needs an Outreach module admin of account '{actor.account.slug}' (they "
            "change what agents remember and see memory health). Ask an admin of the account "
            "to make you one, or use a module admin's token.",
            details={"account": actor.account.slug},
        )
