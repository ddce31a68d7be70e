from django.contrib import admin

from outreach.models import Account, Campaign, Member, Message, Prospect, Reply, Suppression


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "outreach_addon", "subscription_status", "created_at"]
    list_filter = ["outreach_addon", "subscription_status"]
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
