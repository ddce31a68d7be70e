from django.contrib import admin, messages
from django.db.models import Q
from oauth2_provider.forms import ApplicationForm
from oauth2_provider.models import (
    get_access_token_admin_class,
    get_access_token_model,
    get_application_admin_class,
    get_application_model,
    get_refresh_token_admin_class,
    get_refresh_token_model,
)

from outreach.clients import (
    client_unverify,
    client_verify,
    is_self_registered,
    redirect_uri_problem,
    reserved_name_problem,
)
from outreach.models import Account, Campaign, Member, Message, Prospect, Reply, Suppression


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "name",
        "outreach_addon",
        "subscription_status",
        "created_at",
        "closed_at",
    ]
    list_filter = [
        "outreach_addon",
        "subscription_status",
        ("closed_at", admin.EmptyFieldListFilter),
    ]

    def has_delete_permission(self, request, obj=None) -> bool:
        # An account is closed (closed_at), then erased whole by the daily job once its
        # retention has passed (SPEC 16): a delete here would skip the erasure's guarantees.
        return False

    search_fields = ["slug", "name"]


@admin.register(Member)
class MemberAdmin(admin.ModelAdmin):
    list_display = ["user", "account", "is_module_admin", "created_at"]
    list_filter = ["is_module_admin", "account"]
    search_fields = ["user__username", "user__email", "account__slug"]
    list_select_related = ["user", "account"]
    raw_id_fields = ["user"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["name", "account", "locale", "status", "created_at"]
    list_filter = ["locale", "status", "account"]
    search_fields = ["name"]
    list_select_related = ["account"]


@admin.register(Prospect)
class ProspectAdmin(admin.ModelAdmin):
    list_display = ["email", "company_domain", "campaign", "account"]
    list_filter = ["account"]
    search_fields = ["email", "company_domain"]
    list_select_related = ["campaign", "account"]
    raw_id_fields = ["campaign"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["subject", "prospect", "status", "sent_at", "account"]
    list_filter = ["status", "account"]
    list_select_related = ["prospect", "account"]
    raw_id_fields = ["prospect"]


@admin.register(Reply)
class ReplyAdmin(admin.ModelAdmin):
    list_display = ["prospect", "sentiment", "received_at", "account"]
    list_filter = ["sentiment", "account"]
    list_select_related = ["prospect", "account"]
    raw_id_fields = ["prospect"]


@admin.register(Suppression)
class SuppressionAdmin(admin.ModelAdmin):
    list_display = ["kind", "value", "reason", "account", "created_at"]
    list_filter = ["kind", "account"]
    search_fields = ["value"]


# --- OAuth clients and tokens --------------------------------------------------------------
# django-oauth-toolkit's admin classes, with Kit's verification of self-registered clients,
# and token revocation needing a permission (the toolkit offers it to anyone who may view).

Application = get_application_model()
AccessToken = get_access_token_model()
RefreshToken = get_refresh_token_model()


class VerifiedFilter(admin.SimpleListFilter):
    title = "verified"
    parameter_name = "verified"

    def lookups(self, request, model_admin):
        return [("yes", "Verified or set up by an operator"), ("no", "Unverified")]

    def queryset(self, request, queryset):
        trusted = Q(kit_verification__isnull=False) | Q(
            registration_source=Application.RegistrationSource.MANUAL
        )
        if self.value() == "yes":
            return queryset.filter(trusted)
        if self.value() == "no":
            return queryset.exclude(trusted)
        return queryset


admin.site.unregister(Application)


class KitApplicationForm(ApplicationForm):
    """The toolkit's application form, holding self-registered clients to the rules they
    registered under (loopback-only http redirects, no reserved names)."""

    def clean(self):
        data = super().clean()
        if self.instance.pk and is_self_registered(self.instance):
            for uri in (data.get("redirect_uris") or "").split():
                problem = redirect_uri_problem(uri)
                if problem:
                    self.add_error("redirect_uris", problem)
            problem = reserved_name_problem(data.get("name"))
            if problem:
                self.add_error("name", problem)
        return data


@admin.register(Application)
class KitApplicationAdmin(get_application_admin_class()):
    form = KitApplicationForm
    list_display = [*get_application_admin_class().list_display, "verified"]
    list_filter = [*get_application_admin_class().list_filter, VerifiedFilter]
    list_select_related = ["user", "kit_verification"]
    actions = ["verify_clients", "unverify_clients"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and {"name", "redirect_uris"} & set(form.changed_data):
            client_unverify(application=obj)

    @admin.display(boolean=True)
    def verified(self, application):
        return not is_self_registered(application) or hasattr(application, "kit_verification")

    def has_verify_permission(self, request) -> bool:
        return request.user.has_perm("outreach.verify_client")

    @admin.action(
        description="Mark selected clients verified (consent stops warning about them)",
        permissions=["verify"],
    )
    def verify_clients(self, request, queryset):
        count = sum(client_verify(application=a, user=request.user) for a in queryset)
        self.message_user(request, f"Verified {count} client(s).", messages.SUCCESS)

    @admin.action(description="Remove the verification of selected clients", permissions=["verify"])
    def unverify_clients(self, request, queryset):
        count = sum(client_unverify(application=a) for a in queryset)
        self.message_user(request, f"Unverified {count} client(s).", messages.SUCCESS)


def _with_revoke_permission(admin_class):
    """The toolkit's token admin, its revoke action needing the change permission."""

    class Guarded(admin_class):
        @admin.action(
            description=admin_class.revoke_tokens.short_description, permissions=["change"]
        )
        def revoke_tokens(self, request, queryset):
            return admin_class.revoke_tokens(self, request, queryset)

    Guarded.__name__ = Guarded.__qualname__ = f"Kit{admin_class.__name__}"
    return Guarded


for _model, _admin_class in (
    (AccessToken, get_access_token_admin_class()),
    (RefreshToken, get_refresh_token_admin_class()),
):
    admin.site.unregister(_model)
    admin.site.register(_model, _with_revoke_permission(_admin_class))
