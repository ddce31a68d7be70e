"""The business memory pages: the account's shared memory and each member's own context.

Module admins edit, delete and restore account entries here; every member does the same
with their own context. Writes run the agents' operations (``outreach.pages.perform``):
the same checks, role and write budget, saved as a new version by the member; an entry of
another account or another member's context answers 404.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from outreach.errors import KitError, NotFound
from outreach.pages import member_required, perform
from prospect_memory.business import operations
from prospect_memory.business.access import (
    aliases_of,
    entry_for_actor,
    live_entries,
    may_write_layer,
    merged_for_actor,
    require_layer_writer,
    retired_for_actor,
)
from prospect_memory.business.baseline import BY_KEY, STARTERS
from prospect_memory.business.changes import FOLD, Change, folded, line_changes
from prospect_memory.business.conf import business_settings
from prospect_memory.business.errors import VersionMismatch
from prospect_memory.business.forms import EntryForm, editable_json, form_errors, unchanged
from prospect_memory.business.models import Category, Layer
from prospect_memory.business.records import EntryView
from prospect_memory.business.selectors.listing import evictions_list, key_deleted_in_layer
from prospect_memory.business.selectors.recall import entry_history_views
from prospect_memory.business.templatetags.business_format import (
    formatted_value as formatted,
)
from prospect_memory.business.templatetags.business_format import pretty_json
from prospect_memory.business.visibility import shown

LAYERS = (Layer.ACCOUNT, Layer.MEMBER)


def _layer(layer: str) -> str:
    if layer not in LAYERS:
        raise Http404("No such layer.")
    return layer


def _entry(actor, layer: str, key: str):
    try:
        return entry_for_actor(actor, layer=_layer(layer), key=key)
    except NotFound:
        raise Http404("No such entry in this account's business memory.") from None


def value_changes(old_lines: list[str], new_lines: list[str]) -> list[Change]:
    """What changed between two values' formatted lines, folded and cut to what a page shows."""
    changes = folded(line_changes(old_lines, new_lines))
    most = business_settings.COMPARE_SHOWN_MAX_LINES
    if len(changes) > most:
        more = len(changes) - most
        changes = [*changes[:most], Change(FOLD, f"{more} more lines not shown")]
    return changes


def _lines(item) -> list[str]:
    """A value's lines for a comparison (a large one: its compact JSON cut after commas)."""
    if len(item.value_json) <= business_settings.PAGE_PRETTY_MAX_BYTES:
        return pretty_json(item.value).splitlines()
    return item.value_json.replace(",", ",\n").splitlines()


@require_GET
@member_required
def memory_page(request):
    """The account layer grouped by category, the member's own context, and evictions."""
    actor = request.actor
    account = [EntryView.of(e) for e in shown(live_entries(actor, Layer.ACCOUNT)).order_by("key")]
    own = [EntryView.of(e) for e in shown(live_entries(actor, Layer.MEMBER)).order_by("key")]
    groups = [
        (label, [e for e in account if e.category == value]) for value, label in Category.choices
    ]
    return render(
        request,
        "business_memory/memory.html",
        {
            "groups": [(label, entries) for label, entries in groups if entries],
            "account_count": len(account),
            "own": own,
            "evictions": evictions_list(actor=actor, layer=Layer.ACCOUNT)
            + evictions_list(actor=actor, layer=Layer.MEMBER),
            "may_write_account": may_write_layer(actor, Layer.ACCOUNT),
            "starters": [s for s in STARTERS if s.key not in {e.key for e in account}],
            "capacity": business_settings.ACCOUNT_CAPACITY,
            "member_capacity": business_settings.MEMBER_CAPACITY,
        },
    )


@require_GET
@member_required
def entry_page(request, layer: str, key: str):
    actor = request.actor
    entry = EntryView.of(_entry(actor, layer, key))
    versions = entry_history_views(actor, entry.id)
    # Each version against the one after it, inline while the page's comparison budget
    # lasts; past it a version links to its own comparison page.
    budget = business_settings.PAGE_COMPARE_MAX_LINES
    changes = []
    newer_lines = _lines(entry)
    for version in versions:
        lines = _lines(version)
        cost = len(lines) + len(newer_lines)
        diff = value_changes(lines, newer_lines) if cost <= budget else None
        budget -= cost if diff is not None else 0
        changes.append({"version": version, "diff": diff})
        newer_lines = lines
    return render(
        request,
        "business_memory/entry.html",
        {
            "entry": entry,
            "value": formatted(entry),
            "changes": changes,
            "aliases": aliases_of(actor, entry.id),
            "may_write": may_write_layer(actor, layer),
        },
    )


def _save(request, form: EntryForm, layer: str, key: str, *, expected_version: int):
    """Store the form's entry: the entry page to go to, or the refusal (shown on the form)."""
    try:
        data = perform(
            request,
            operations.STORE,
            key=key,
            value=form.cleaned_data["value"],
            layer=layer,
            category=form.cleaned_data["category"],
            confidence=form.cleaned_data["confidence"],
            expected_version=expected_version,
        )
    except KitError as error:
        form_errors(form, error, creating=expected_version == 0)
        return error
    return redirect("business-entry", layer=layer, key=data["entry"]["key"])


@dataclass(frozen=True)
class Conflict:
    """Someone else's version, stored while a member edited an older one."""

    theirs: EntryView
    started_from: int
    changes: list[Change] | None


def _conflict(actor, layer: str, key: str, started_from: int) -> Conflict:
    theirs = EntryView.of(_entry(actor, layer, key))
    kept = {v.version: v for v in entry_history_views(actor, theirs.id, only=(started_from,))}
    before = kept.get(started_from)
    changes = value_changes(_lines(before), _lines(theirs)) if before is not None else None
    return Conflict(theirs, started_from, changes)


def _expected_version(request) -> int | None:
    """The version a confirmation page showed (None when the form did not carry one)."""
    try:
        return int(request.POST.get("expected_version", ""))
    except ValueError:
        return None


def _deleted_meanwhile(request, layer: str, key: str):
    """The edit form of an entry someone deleted meanwhile: the member's changes shown again
    as a new entry of that key, to save or to leave."""
    data = request.POST.copy()
    data["key"] = key
    data.pop("expected_version", None)
    form = EntryForm(data)
    form.is_valid()
    form.add_error(
        None,
        "Someone deleted this entry while you were editing it. Your changes are below: save "
        "to store them as a new entry, or leave the page.",
    )
    return render(
        request,
        "business_memory/edit.html",
        {
            "form": form,
            "entry": None,
            "layer": layer,
            "creating": True,
            "action": reverse("business-entry-new", kwargs={"layer": layer}),
        },
    )


@require_http_methods(["GET", "POST"])
@member_required
def entry_edit(request, layer: str, key: str):
    actor = request.actor
    try:
        current = EntryView.of(_entry(actor, layer, key))
    except Http404:
        if request.method != "POST" or not key_deleted_in_layer(actor, _layer(layer), key):
            raise
        require_layer_writer(actor, layer)
        return _deleted_meanwhile(request, layer, key)
    require_layer_writer(actor, layer)
    conflict = None
    if request.method == "POST":
        form = EntryForm(request.POST)
        started = form.cleaned_data.get("expected_version") if form.is_valid() else None
        if form.is_valid() and (started is None or started > current.version):
            form.add_error(None, "This page sent a version no entry has; open the entry again.")
        elif form.is_valid() and unchanged(form, current):
            messages.info(request, f"Nothing changed in {current.key}: no new version.")
            return redirect("business-entry", layer=layer, key=current.key)
        elif form.is_valid():
            expected = form.cleaned_data["expected_version"]
            saved = _save(request, form, layer, current.key, expected_version=expected)
            if isinstance(saved, HttpResponse):
                messages.success(request, f"Saved {current.key} as a new version.")
                return saved
            if isinstance(saved, VersionMismatch):
                # Their version is shown, and the member's changes kept: saving again now
                # replaces theirs knowingly.
                conflict = _conflict(actor, layer, current.key, expected)
                current = conflict.theirs
                data = request.POST.copy()
                data["expected_version"] = str(current.version)
                form = EntryForm(data)
                form.is_valid()
    else:
        form = EntryForm(
            initial={
                "value": editable_json(current.value),
                "category": current.category,
                "confidence": current.confidence,
                "expected_version": current.version,
            }
        )
    return render(
        request,
        "business_memory/edit.html",
        {"form": form, "entry": current, "layer": layer, "creating": False, "conflict": conflict},
    )


@require_http_methods(["GET", "POST"])
@member_required
def entry_new(request, layer: str):
    starter = None
    actor = request.actor
    require_layer_writer(actor, _layer(layer))
    if request.method == "POST":
        form = EntryForm(request.POST)
        if form.is_valid():
            key = form.cleaned_data["key"]
            saved = _save(request, form, layer, key, expected_version=0)
            if isinstance(saved, HttpResponse):
                messages.success(request, f"Stored {key.lower()}.")
                return saved
    else:
        starter = BY_KEY.get(request.GET.get("start", "")) if layer == Layer.ACCOUNT else None
        form = EntryForm(
            initial={
                "key": starter.key if starter else "",
                "category": starter.category if starter else Category.FACT,
                "confidence": business_settings.CONFIDENCE_DEFAULT,
                "value": pretty_json(starter.value) if starter else "{}",
            }
        )
    return render(
        request,
        "business_memory/edit.html",
        {"form": form, "entry": None, "layer": layer, "creating": True, "starter": starter},
    )


@require_http_methods(["GET", "POST"])
@member_required
def entry_delete_page(request, layer: str, key: str):
    actor = request.actor
    entry = EntryView.of(_entry(actor, layer, key))
    require_layer_writer(actor, layer)
    if request.method == "POST":
        try:
            perform(
                request,
                operations.DELETE,
                key=entry.key,
                layer=layer,
                expected_version=_expected_version(request) or entry.version,
            )
        except VersionMismatch:
            messages.error(
                request, f"{entry.key} changed since you looked at it; here it is as it is now."
            )
            return redirect("business-entry", layer=layer, key=entry.key)
        except KitError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"Deleted {entry.key} and its history.")
        return redirect("business-memory")
    return render(request, "business_memory/delete.html", {"entry": entry})


@require_http_methods(["GET", "POST"])
@member_required
def version_restore_page(request, layer: str, key: str, version: int):
    actor = request.actor
    entry = EntryView.of(_entry(actor, layer, key))
    require_layer_writer(actor, layer)
    kept = next((v for v in entry_history_views(actor, entry.id) if v.version == version), None)
    if kept is None:
        raise Http404("That version is not kept.")
    if request.method == "POST":
        try:
            data = perform(
                request,
                operations.RESTORE_VERSION,
                key=entry.key,
                version=version,
                layer=layer,
                expected_version=_expected_version(request) or entry.version,
            )
        except VersionMismatch:
            messages.error(
                request,
                f"{entry.key} changed since you looked at it; check its history again before "
                "restoring.",
            )
        except KitError as error:
            messages.error(request, error.message)
        else:
            now = data["entry"]["version"]
            messages.success(request, f"Version {version} is current again, as version {now}.")
        return redirect("business-entry", layer=layer, key=entry.key)
    return render(
        request,
        "business_memory/restore_version.html",
        {
            "entry": entry,
            "kept": kept,
            "diff": value_changes(_lines(entry), _lines(kept)),
        },
    )


@require_GET
@member_required
def version_changes_page(request, layer: str, key: str, version: int):
    """What changed from one kept version to the version after it (one pair, on its own)."""
    actor = request.actor
    entry = EntryView.of(_entry(actor, layer, key))
    pair = {v.version: v for v in entry_history_views(actor, entry.id, only=(version, version + 1))}
    kept = pair.get(version)
    if kept is None:
        raise Http404("That version is not kept.")
    # The version after it is kept too, or it is the entry's current one.
    newer = pair.get(version + 1, entry)
    return render(
        request,
        "business_memory/version_changes.html",
        {
            "entry": entry,
            "kept": kept,
            "newer": newer,
            "diff": value_changes(_lines(kept), _lines(newer)),
        },
    )


@require_http_methods(["GET", "POST"])
@member_required
def eviction_restore_page(request, entry_id):
    actor = request.actor
    try:
        evicted = EntryView.of(retired_for_actor(actor, entry_id))
    except NotFound:
        raise Http404("No such evicted or expired entry in this account.") from None
    require_layer_writer(actor, evicted.layer)
    if request.method == "POST":
        try:
            data = perform(request, operations.RESTORE_EVICTION, entry_id=str(entry_id))
        except KitError as error:
            messages.error(request, error.message)
            return redirect("business-memory")
        gone = ", ".join(e["key"] for e in data["evicted"])
        messages.success(
            request,
            f"Restored {evicted.key}." + (f" To make room, {gone} was evicted." if gone else ""),
        )
        return redirect("business-entry", layer=evicted.layer, key=evicted.key)
    return render(request, "business_memory/restore_eviction.html", {"entry": evicted})


@require_http_methods(["GET", "POST"])
@member_required
def merge_undo_page(request, layer: str, key: str):
    actor = request.actor
    try:
        alias = EntryView.of(merged_for_actor(actor, layer=_layer(layer), key=key))
    except NotFound:
        raise Http404("No such merged entry in this account's business memory.") from None
    require_layer_writer(actor, layer)
    if request.method == "POST":
        try:
            perform(request, operations.UNDO_MERGE, key=alias.key, layer=layer)
        except KitError as error:
            messages.error(request, error.message)
            return redirect("business-memory")
        messages.success(request, f"{alias.key} is an entry of its own again.")
        return redirect("business-entry", layer=layer, key=alias.key)
    return render(request, "business_memory/undo_merge.html", {"entry": alias})


@require_http_methods(["GET", "POST"])
@member_required
def entry_review_page(request, layer: str, key: str):
    """A writer of the layer reads a flagged entry and clears its flags (audited); deleting
    it is the delete page's."""
    actor = request.actor
    entry = EntryView.of(_entry(actor, layer, key))
    require_layer_writer(actor, layer)
    if request.method == "POST":
        try:
            # Only the version the person read is cleared (no fallback to the current one).
            perform(
                request,
                operations.UNFLAG,
                key=entry.key,
                layer=layer,
                expected_version=_expected_version(request),
            )
        except VersionMismatch:
            messages.error(
                request, f"{entry.key} changed since you read it; review its new version."
            )
            return redirect("business-entry-review", layer=layer, key=entry.key)
        except KitError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, f"Cleared the flags of {entry.key}.")
        return redirect("business-entry", layer=layer, key=entry.key)
    return render(
        request,
        "business_memory/review.html",
        {"entry": entry, "value": formatted(entry)},
    )
