"""Outreach's pages: the prospect list, the account switcher, OAuth consent (where a member
picks the account a token acts for) and dynamic client registration."""

from __future__ import annotations

import copy
import json

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import get_application_model
from oauth2_provider.views import (
    AuthorizationView,
    OAuthProtectedResourceMetadataView,
    OAuthServerMetadataView,
)
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from outreach.addresses import address_bucket, client_address
from outreach.clients import client_metadata_problem, client_unverify, consent_client
from outreach.oauth import METADATA_PATH, public_base_url, resource_problem
from outreach.pages import member_required
from outreach.ratelimit import registration_allowed
from outreach.selectors import (
    SESSION_ACCOUNT_KEY,
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
        problem = resource_problem(request.GET.getlist("resource"), public_base_url(request))
        if problem:
            error = {"error": "invalid_target", "description": problem}
            return render(request, self.template_name, {"error": error}, status=400)
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
        # A scope asked for twice ("outreach_read outreach_read") is one permission.
        if "scopes_descriptions" in context:
            context["scopes_descriptions"] = list(dict.fromkeys(context["scopes_descriptions"]))
        form = context.get("form")
        application = context.get("application")
        if application is None and form is not None:
            client_id = form["client_id"].value()
            application = (
                get_application_model().objects.filter(client_id=client_id).first()
                if client_id
                else None
            )
        if application is not None and form is not None:
            context["client"] = consent_client(application, form["redirect_uri"].value() or "")
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


class KitServerMetadataView(OAuthServerMetadataView):
    """RFC 8414 metadata naming Kit's one issuer (its origin) at every well-known path a
    client may try: the root, and for a resource's path the path-inserted and path-appended
    forms (``/.well-known/oauth-authorization-server/mcp``,
    ``/mcp/.well-known/oauth-authorization-server``). django-oauth-toolkit would reflect the
    path into the issuer; RFC 8414 section 3.3 wants the issuer tokens and the other documents
    carry, so the document is read as if asked at the root."""

    def get(self, request, *args, **kwargs):
        # The toolkit reads the issuer from the path asked for: it is handed a copy asked
        # at the root (the request itself, which middleware and logs see, is left as is).
        at_root = copy.copy(request)
        at_root.path = METADATA_PATH
        return super().get(at_root, *args, **kwargs)


class KitResourceMetadataView(OAuthProtectedResourceMetadataView):
    """RFC 9728 metadata of one of Kit's resources (``/mcp``, ``/api``), named from Kit's
    public origin, as the tokens for it are."""

    def get_resource(self, request):
        _, _, path = request.path.partition("/.well-known/oauth-protected-resource")
        return public_base_url(request) + path.rstrip("/")


def _refused(error: str, description: str, *, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": error, "error_description": description}, status=status)


def _metadata_refusal(request) -> JsonResponse | None:
    """The refusal of a registration or update whose metadata breaks Kit's client rules."""
    try:
        metadata = json.loads(request.body)
    except (ValueError, UnicodeDecodeError):
        return None  # DOT answers malformed bodies itself
    problem = client_metadata_problem(metadata)
    return _refused(problem.error, problem.description) if problem else None


@method_decorator(csrf_exempt, name="dispatch")
class KitClientRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration under Kit's client rules (``outreach.clients``), limited to
    ``KIT_CLIENT_REGISTRATIONS_PER_HOUR`` registrations per client address."""

    def post(self, request, *args, **kwargs):
        wait = registration_allowed(address_bucket(client_address(request)))
        if wait is not None:
            response = _refused(
                "rate_limited",
                f"Too many client registrations from this address; try again in {wait} s.",
                status=429,
            )
            response["Retry-After"] = str(wait)
            return response
        return _metadata_refusal(request) or super().post(request, *args, **kwargs)


@method_decorator(csrf_exempt, name="dispatch")
class KitClientManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 client configuration: an update passes the same rules as a registration,
    and a verified client that changes its name or redirect URIs is unverified again."""

    def put(self, request, *args, client_id: str, **kwargs):
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth  # who may change the client is checked before what they send
        refusal = _metadata_refusal(request)
        if refusal is not None:
            return refusal
        Application = get_application_model()
        before = Application.objects.filter(client_id=client_id).values("name", "redirect_uris")
        before = before.first()
        response = super().put(request, *args, client_id=client_id, **kwargs)
        if response.status_code == 200 and before is not None:
            application = Application.objects.filter(client_id=client_id).first()
            changed = application is not None and (
                application.name != before["name"]
                or application.redirect_uris != before["redirect_uris"]
            )
            if changed:
                client_unverify(application=application)
        return response


def signin_locked_out(request, response=None, credentials=None):
    """django-axes' answer once sign-ins are paused: a page that says why and how long."""
    minutes = max(round(settings.AXES_COOLOFF_TIME * 60), 1)
    page = render(
        request,
        "outreach/locked_out.html",
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "cooloff_minutes": minutes},
        status=429,
    )
    page["Retry-After"] = str(minutes * 60)
    return page


@require_GET
@member_required
def home(request):
    """The signed-in member's prospects, in the account they act in."""
    member = request.actor.member
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
    request.session[SESSION_ACCOUNT_KEY] = member.account.slug
    messages.success(request, f"Now working in {member.account.name}.")
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return redirect(target)
