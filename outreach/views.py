"""Outreach's pages: the prospect list, the account switcher, OAuth consent (where a member
picks the account a token acts for) and dynamic client registration."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.forms import AllowForm
from oauth2_provider.views import AuthorizationView
from oauth2_provider.views.dynamic_client_registration import DynamicClientRegistrationView

from outreach.selectors import (
    member_for_session,
    member_for_user,
    memberships_for_user,
    prospects_for_account,
)


class AccountAllowForm(AllowForm):
    account = forms.ChoiceField(required=False, label="Account")


class KitAuthorizationView(AuthorizationView):
    """DOT's authorization view plus the choice of account; consent is always asked."""

    form_class = AccountAllowForm
    template_name = "oauth2_provider/authorize.html"

    def dispatch(self, request, *args, **kwargs):
        if request.method == "GET" and "approval_prompt" in request.GET:
            # A token without an account is useless here: always show the consent page.
            query = request.GET.copy()
            query.pop("approval_prompt")
            request.GET = query
        self._kit_account_id = None
        return super().dispatch(request, *args, **kwargs)

    def _memberships(self):
        if not hasattr(self, "_cached_memberships"):
            self._cached_memberships = memberships_for_user(self.request.user)
        return self._cached_memberships

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        memberships = self._memberships()
        form.fields["account"].choices = [
            (m.account.slug, f"{m.account.name} ({m.account.slug})") for m in memberships
        ]
        if len(memberships) == 1:
            form.fields["account"].initial = memberships[0].account.slug
        return form

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["memberships"] = self._memberships()
        return context

    def form_valid(self, form):
        if form.cleaned_data.get("allow"):
            by_slug = {m.account.slug: m.account for m in self._memberships()}
            chosen = by_slug.get(form.cleaned_data.get("account") or "")
            if chosen is None:
                form.add_error(
                    "account",
                    "Choose the account this connection acts for."
                    if by_slug
                    else "You are not a member of any Kit account.",
                )
                return self.form_invalid(form)
            self._kit_account_id = chosen.pk
        return super().form_valid(form)

    def create_authorization_response(self, request, scopes, credentials, allow):
        credentials = {**credentials, "kit_account_id": self._kit_account_id}
        return super().create_authorization_response(request, scopes, credentials, allow)


LOOPBACK_HOSTS = {"127.0.0.1", "::1", "localhost"}


@method_decorator(csrf_exempt, name="dispatch")
class KitClientRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration that allows plain-http redirect URIs on loopback only.

    Native clients such as Claude Code receive the authorization code on an
    ``http://127.0.0.1:<port>/`` redirect (RFC 8252); anything else must be https.
    """

    def post(self, request, *args, **kwargs):
        try:
            metadata = json.loads(request.body)
        except (ValueError, UnicodeDecodeError):
            metadata = None
        uris = metadata.get("redirect_uris") if isinstance(metadata, dict) else None
        for uri in uris if isinstance(uris, list) else []:
            if not isinstance(uri, str):
                continue
            parts = urlsplit(uri)
            if parts.scheme == "http" and (parts.hostname or "") not in LOOPBACK_HOSTS:
                return JsonResponse(
                    {
                        "error": "invalid_redirect_uri",
                        "error_description": f"{uri!r}: http redirect URIs are allowed only "
                        "on loopback (127.0.0.1, [::1], localhost); use https.",
                    },
                    status=400,
                )
        return super().post(request, *args, **kwargs)


@login_required
@require_GET
def home(request):
    """The signed-in member's prospects, in the account they act in."""
    member = member_for_session(user=request.user, account_slug=request.session.get("kit_account"))
    if member is None:
        return render(request, "prospect_memory/no_account.html", status=403)
    page = Paginator(prospects_for_account(account=member.account), 50).get_page(
        request.GET.get("page")
    )
    return render(request, "outreach/home.html", {"page": page, "member": member})


@login_required
@require_POST
def account_switch(request):
    member = member_for_user(user=request.user, account_slug=request.POST.get("account", ""))
    if member is None:
        raise Http404("You have no seat in that account.")
    request.session["kit_account"] = member.account.slug
    messages.success(request, f"Now working in {member.account.name}.")
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)
