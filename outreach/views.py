"""Outreach's pages: the OAuth consent page, where a member picks the account a token acts for."""

from __future__ import annotations

from django import forms
from oauth2_provider.forms import AllowForm
from oauth2_provider.views import AuthorizationView

from outreach.selectors import memberships_for_user


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
