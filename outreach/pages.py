"""What every Kit web page shares: the signed-in member acting in one account, and a
clear page (not a 500) when the account or the member's role does not allow the page."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from outreach import scopes
from outreach.access import Actor, require_outreach
from outreach.errors import AddonRequired, NotModuleAdmin, SubscriptionInactive
from outreach.operations import Operation, execute, read_then_afterwards
from outreach.selectors import member_for_request
from pgreplicas import routing as replicas

_HEADINGS = {
    AddonRequired: "The Outreach add-on is needed",
    SubscriptionInactive: "The subscription is not active",
    NotModuleAdmin: "For Outreach module admins",
}
#: Refusals a page answers with a 403 page saying what is missing and who can fix it.
REFUSALS = tuple(_HEADINGS)


def refused(request, error: AddonRequired | SubscriptionInactive | NotModuleAdmin):
    return render(
        request,
        "outreach/refused.html",
        {"heading": _HEADINGS[type(error)], "message": error.message, "code": error.code},
        status=error.http_status,
    )


def member_required(view):
    """Signed in, with a seat in an account that has Outreach; ``request.actor`` acts in the
    account chosen in the switcher. Refusals by the account's rules become a 403 page.

    A page that only reads (GET) may be read from a replica that has replayed the member's
    own writes (``pgreplicas``). A form writes through :func:`perform`, which keeps the
    member's position after the write (a form refused keeps none).
    """

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        member = member_for_request(request)
        if member is None:
            return render(request, "outreach/no_account.html", status=403)
        request.actor = Actor.for_member(member)
        try:
            require_outreach(request.actor)
            if request.method in ("GET", "HEAD"):  # a page read: a replica may serve it
                return read_then_afterwards(
                    lambda attempt: replicas.read(member.account_id, member.pk, attempt),
                    lambda: view(request, *args, **kwargs),
                )
            return view(request, *args, **kwargs)
        except REFUSALS as error:
            return refused(request, error)

    return wrapper


def perform(request, operation: Operation, **arguments) -> dict:
    """Run ``operation`` for the signed-in member as the agents' surface runs it: the same
    argument checks, role and write budget (a session holds every scope). Its ``data``, or
    a KitError for the page to show."""
    return execute(operation, actor=request.actor, granted=scopes.ALL, arguments=arguments)
