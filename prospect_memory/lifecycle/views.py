"""The data lifecycle's pages: erasing a company, typed to confirm."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from outreach.access import require_module_admin
from outreach.errors import KitError
from outreach.pages import member_required, perform
from prospect_memory.lifecycle.erase import company_footprint
from prospect_memory.lifecycle.operations import ERASE_COMPANY
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import InvalidDomain

#: How the page names what an erasure removes.
WHAT = {
    "notes": "notes",
    "archived_notes": "archived notes (replaced by a compaction)",
    "compactions": "compactions",
    "audit_events": "audit events naming the domain",
    "usage_events": "usage events naming the domain",
}


@require_http_methods(["GET", "POST"])
@member_required
def company_erase_page(request, domain: str):
    """Module admins: what erasing a company removes, and a field to type its domain."""
    actor = request.actor
    require_module_admin(actor)
    try:
        domain = resolve_domain(domain).domain
    except InvalidDomain:
        raise Http404("Not a company domain.") from None
    footprint = company_footprint(actor, domain)
    if not any(footprint.values()):
        raise Http404("This account has nothing on that company.")
    error = None
    if request.method == "POST":
        try:
            data = perform(
                request, ERASE_COMPANY, domain=domain, confirm=request.POST.get("confirm", "")
            )
        except KitError as refused:
            error = refused.message
        else:
            counts = data["erased"]["counts"]
            messages.success(
                request,
                f"Erased everything the account knew about {domain}: {counts['notes']} notes, "
                f"{counts['archived_notes']} archived notes and {counts['compactions']} "
                "compactions. Kit keeps who erased it and when, not the domain.",
            )
            return redirect("home")
    shown = [(WHAT[kind], count) for kind, count in footprint.items()]
    return render(
        request,
        "lifecycle/erase_company.html",
        {"domain": domain, "footprint": shown, "error": error},
    )
