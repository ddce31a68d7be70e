"""A member leaves however their seat goes: removed in the admin or by a script, with their
user deleted, or with their user deactivated (which removes their seats)."""

from __future__ import annotations

import contextvars

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_save, pre_delete

from outreach.models import Member
from prospect_memory.lifecycle.erase import member_leaving

#: What the erasure of a seat names as who did it.
SEAT_REMOVED = "membership removed"
USER_DEACTIVATED = "user deactivated"

_why: contextvars.ContextVar[str] = contextvars.ContextVar("why", default=SEAT_REMOVED)


def _seat_removed(sender, instance: Member, **kwargs) -> None:
    member_leaving(instance, by=_why.get())


def _user_saved(sender, instance, **kwargs) -> None:
    if instance.is_active:
        return
    token = _why.set(USER_DEACTIVATED)
    try:
        with transaction.atomic():
            for seat in Member.objects.filter(user=instance).select_related("user", "account"):
                seat.delete()
    finally:
        _why.reset(token)


def connect() -> None:
    pre_delete.connect(_seat_removed, sender=Member, dispatch_uid="kit-member-leaves")
    post_save.connect(_user_saved, sender=get_user_model(), dispatch_uid="kit-user-deactivated")
