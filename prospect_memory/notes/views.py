"""Kit's web pages for prospect memory: read and delete only.

There is no form that creates or edits a note anywhere in the browser: agents, through the
MCP tools and the API, are the only write path. Anything outside the member's account
answers 404, never 403, so a page never confirms that another account's object exists.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from outreach.access import Actor, is_module_admin, require_module_admin
from outreach.errors import KitError
from outreach.pages import member_required, perform
from outreach.selectors import (
    account_knows_domain,
    prospect_for_member,
    relationship_for_domain,
)
from prospect_memory.notes.domains import resolve_domain
from prospect_memory.notes.errors import InvalidDomain, NotFound
from prospect_memory.notes.markdown import render_markdown
from prospect_memory.notes.operations import NOTE_DELETE, NOTE_UNFLAG
from prospect_memory.notes.records import NoteView
from prospect_memory.notes.rules import stop_reasons
from prospect_memory.notes.selectors import (
    dossier_exists,
    dossier_note_count,
    note_for_actor,
    note_view,
    notes_list,
)

PREVIEW_NOTES = 3
PAGE_SIZE = 20


class _Shown:
    """A note as a page shows it: the shared view plus safe HTML for its body."""

    def __init__(self, view: NoteView):
        self.view = view
        self.html = render_markdown(view.body)

    def __getattr__(self, name):
        return getattr(self.view, name)


def _notes(actor: Actor, domain: str, *, stale: bool | None = None):
    return notes_list(actor=actor, domain=domain, stale=stale)


def _shown(rows, domain: str) -> list[_Shown]:
    return [_Shown(note_view(note, domain=domain)) for note in rows]


def _company_context(actor: Actor, domain: str, address: str | None = None) -> dict:
    relationship = relationship_for_domain(account=actor.account, domain=domain, address=address)
    newest = [*_notes(actor, domain)[:PREVIEW_NOTES]]
    return {
        "domain": domain,
        "relationship": relationship,
        "stop_reasons": stop_reasons(relationship, domain),
        "notes": _shown(newest, domain),
        "note_count": dossier_note_count(actor, domain),
        "can_delete": is_module_admin(actor),
    }


@require_GET
@member_required
def prospect_page(request, prospect_id: int):
    prospect = prospect_for_member(member=request.actor.member, prospect_id=prospect_id)
    if prospect is None:
        raise Http404("No such prospect in this account.")
    context = _company_context(request.actor, prospect.company_domain, prospect.email)
    return render(request, "prospect_memory/prospect.html", {**context, "prospect": prospect})


def _domain_or_404(actor: Actor, raw: str) -> str:
    try:
        domain = resolve_domain(raw).domain
    except InvalidDomain:
        raise Http404("Not a company domain.") from None
    known = dossier_exists(actor, domain) or account_knows_domain(
        account=actor.account, domain=domain
    )
    if not known:
        raise Http404("This account has nothing on that company.")
    return domain


@require_GET
@member_required
def company_page(request, domain: str):
    domain = _domain_or_404(request.actor, domain)
    if domain != request.resolver_match.kwargs["domain"]:
        return redirect("company", domain=domain)
    return render(request, "prospect_memory/prospect.html", _company_context(request.actor, domain))


@require_GET
@member_required
def note_list(request, domain: str):
    domain = _domain_or_404(request.actor, domain)
    stale = {"stale": True, "fresh": False}.get(request.GET.get("show", ""))
    page = Paginator(_notes(request.actor, domain, stale=stale), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "prospect_memory/note_list.html",
        {
            "domain": domain,
            "page": page,
            "notes": _shown(page.object_list, domain),
            "show": request.GET.get("show", "all"),
            "can_delete": is_module_admin(request.actor),
        },
    )


def _note_to_change(actor: Actor, note_id):
    """An active note of the actor's account (404 otherwise), for a module admin (403)."""
    try:
        note = note_for_actor(actor, note_id)
    except NotFound:
        raise Http404("No such note in this account.") from None
    require_module_admin(actor)
    return note


@require_http_methods(["GET", "POST"])
@member_required
def note_delete_page(request, note_id):
    note = _note_to_change(request.actor, note_id)
    domain = note.dossier.domain
    if request.method == "POST":
        try:
            data = perform(request, NOTE_DELETE, note_id=str(note.id))
        except KitError as error:
            messages.error(request, error.message)
        else:
            title = note.title or "Untitled note"
            more = len(data["also_deleted_note_ids"])
            extra = f" and the {more} notes it had replaced" if more else ""
            messages.success(request, f"Deleted “{title}”{extra}.")
        return redirect(reverse("note-list", kwargs={"domain": domain}))
    shown = _Shown(note_view(note, domain=domain))
    return render(request, "prospect_memory/note_delete.html", {"note": shown, "domain": domain})


@require_http_methods(["GET", "POST"])
@member_required
def note_review_page(request, note_id):
    """A module admin reads a flagged note and clears its flags (audited) or deletes it."""
    note = _note_to_change(request.actor, note_id)
    domain = note.dossier.domain
    if request.method == "POST":
        try:
            perform(request, NOTE_UNFLAG, note_id=str(note.id))
        except KitError as error:
            messages.error(request, error.message)
        else:
            title = note.title or "Untitled note"
            done = "Cleared the flags of" if note.flagged_at else "Nothing to clear on"
            messages.success(request, f"{done} “{title}”.")
        return redirect(reverse("note-list", kwargs={"domain": domain}))
    shown = _Shown(note_view(note, domain=domain))
    return render(request, "prospect_memory/note_review.html", {"note": shown, "domain": domain})


@require_GET
@member_required
def company_lookup(request):
    """The search box: any form of a company (email, URL, domain) to its page."""
    raw = request.GET.get("domain", "")
    try:
        domain = resolve_domain(raw).domain
    except InvalidDomain as error:
        messages.error(request, error.message)
        return redirect("home")
    return redirect("company", domain=domain)
