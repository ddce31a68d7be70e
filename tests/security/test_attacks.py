"""Attacks that once worked, replayed through the real HTTP surface; each must now fail.

One section per finding of the security review (issue 10): admin permissions, consent
phishing, client management, the write budget, sign-in and registration throttling,
authorization code replay, squatted operator clients, a malformed Content-Length, and
the Content-Security-Policy and demo-seed defaults.
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, set_token_value

from outreach.access import Actor
from outreach.clients import displayed_host
from outreach.models import OAuthAccessTokenAccount, OAuthClientVerification
from outreach.moderation import MODERATORS, moderators_group_sync
from prospect_memory.notes.models import Compaction, Note
from prospect_memory.notes.services.compaction import dossier_compact
from tests import factories
from tests.factories import SECRET
from tests.helpers import bearer as _bearer
from tests.helpers import token as issue_token
from tests.oauth_client import (
    REDIRECT,
    Authorization,
    form_fields,
    refresh,
    register,
    tools_list,
)

pytestmark = pytest.mark.django_db


SAVE = {
    "domain": "acme.dev",
    "body": "Acme opened an office in Lisbon.",
    "source_urls": ["https://acme.dev/news"],
    "observed_at": "2026-11-20",
}


def staff_user(username: str, *permissions: str):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    for name in permissions:
        app_label, codename = name.split(".")
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return user


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@pytest.fixture
def compaction(module_admin, notes):
    result = dossier_compact(
        actor=Actor.for_member(module_admin), domain="acme.dev", expected_note_count=3, body="m"
    )
    return Compaction.objects.get(pk=result.compaction_id)


# --- 1. Django admin honours model permissions ------------------------------------------------


def _admin_objects() -> list[tuple[str, object]]:
    """(changelist URL prefix, one object or None) for every model registered in admin."""
    found = []
    for model in admin.site._registry:
        meta = model._meta
        found.append((f"/admin/{meta.app_label}/{meta.model_name}/", model.objects.first()))
    return found


def test_staff_without_permissions_sees_and_changes_nothing(compaction, notes):
    browser = signed_in(staff_user("bare-staff"))
    objects = _admin_objects()
    assert len(objects) > 15
    for prefix, obj in objects:
        assert browser.get(prefix).status_code == 403, prefix
        if obj is not None:
            for view in ("change", "delete"):
                response = browser.get(f"{prefix}{obj.pk}/{view}/")
                assert response.status_code in (403, 302), f"{prefix}{obj.pk}/{view}/"
                assert SECRET.encode() not in response.content
    # The attack of the review: deleting a note by POST, and the bulk delete action.
    note = Note.objects.filter(status="active").first()
    browser.post(f"/admin/prospect_memory/note/{note.pk}/delete/", {"post": "yes"})
    browser.post(
        "/admin/prospect_memory/note/",
        {"action": "delete_notes", "_selected_action": [str(note.pk)]},
    )
    browser.post(
        "/admin/prospect_memory/compaction/",
        {"action": "restore", "_selected_action": [str(compaction.pk)]},
    )
    assert Note.objects.filter(pk=note.pk).exists()
    assert Compaction.objects.get(pk=compaction.pk).restored_at is None


def test_view_permission_shows_decrypted_notes_but_cannot_delete_or_restore(compaction):
    browser = signed_in(
        staff_user("viewer", "prospect_memory.view_note", "prospect_memory.view_compaction")
    )
    merged = compaction.merged_note
    page = browser.get(f"/admin/prospect_memory/note/{merged.pk}/change/")
    assert page.status_code == 200
    assert b"m" in page.content
    assert browser.get(f"/admin/prospect_memory/note/{merged.pk}/delete/").status_code == 403
    browser.post(
        "/admin/prospect_memory/note/",
        {"action": "delete_notes", "_selected_action": [str(merged.pk)]},
    )
    assert Note.objects.filter(pk=merged.pk).exists()
    listing = browser.get("/admin/prospect_memory/compaction/").content.decode()
    assert 'value="restore"' not in listing
    browser.post(
        "/admin/prospect_memory/compaction/",
        {"action": "restore", "_selected_action": [str(compaction.pk)]},
    )
    assert Compaction.objects.get(pk=compaction.pk).restored_at is None


def test_the_moderators_group_can_moderate_and_nothing_more(compaction, notes, account):
    group, missing = moderators_group_sync()
    assert missing == []
    moderator = staff_user("moderator")
    moderator.groups.add(group)
    browser = signed_in(moderator)
    merged = compaction.merged_note
    assert browser.get(f"/admin/prospect_memory/note/{merged.pk}/change/").status_code == 200
    browser.post(
        "/admin/prospect_memory/compaction/",
        {"action": "restore", "_selected_action": [str(compaction.pk)]},
    )
    assert Compaction.objects.get(pk=compaction.pk).restored_at is not None
    note = Note.objects.filter(status="active").first()
    browser.post(f"/admin/prospect_memory/note/{note.pk}/delete/", {"post": "yes"})
    assert not Note.objects.filter(pk=note.pk).exists()
    # Moderation does not reach accounts, OAuth clients or tokens.
    assert browser.get(f"/admin/outreach/account/{account.pk}/change/").status_code == 200
    assert browser.post(f"/admin/outreach/account/{account.pk}/change/", {}).status_code == 403
    assert browser.get("/admin/oauth2_provider/application/").status_code == 403
    assert browser.get("/admin/oauth2_provider/accesstoken/").status_code == 403
    # Running the sync again changes nothing.
    assert moderators_group_sync()[0].permissions.count() == group.permissions.count()
    assert Group.objects.filter(name=MODERATORS).count() == 1


def test_token_revocation_in_admin_needs_the_change_permission(module_admin):
    issue_token(module_admin, ["outreach_read"], client_name="Ops")
    token = AccessToken.objects.get()
    browser = signed_in(staff_user("token-viewer", "oauth2_provider.view_accesstoken"))
    browser.post(
        "/admin/oauth2_provider/accesstoken/",
        {"action": "revoke_tokens", "_selected_action": [str(token.pk)]},
    )
    assert AccessToken.objects.filter(pk=token.pk).exists()


# --- 2. Consent phishing through open registration ---------------------------------------------


def test_consent_page_shows_where_the_code_goes_and_that_the_client_is_unverified(module_admin):
    # The attacker registers a client named like a trusted one, with its own redirect.
    attacker = Client()
    registered = register(attacker, "Claude Code", "https://evil.example/steal").json()
    flow = Authorization(registered["client_id"], redirect="https://evil.example/steal")
    # The member follows the crafted link.
    page = signed_in(module_admin.user).get(flow.url).content.decode()
    assert "Unverified client" in page
    assert "calls itself “Claude Code”" in page
    assert '<strong class="host">evil.example</strong>' in page


def test_an_operator_verifies_a_client_and_changing_it_removes_the_verification(module_admin):
    registered = register(Client(), "Partner CRM sync", "https://partner.example/cb").json()
    application = Application.objects.get(client_id=registered["client_id"])
    operator = get_user_model().objects.create_superuser("ops", password="x")
    signed_in(operator).post(
        "/admin/oauth2_provider/application/",
        {"action": "verify_clients", "_selected_action": [str(application.pk)]},
    )
    assert OAuthClientVerification.objects.filter(application=application).exists()
    flow = Authorization(registered["client_id"], redirect="https://partner.example/cb")
    page = signed_in(module_admin.user).get(flow.url).content.decode()
    assert "Verified client" in page
    assert "Unverified" not in page
    # The client renames itself through RFC 7592: the verification goes with the change.
    changed = Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps(
            {
                "client_name": "Partner CRM sync v2",
                "redirect_uris": ["https://partner.example/cb"],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registered['registration_access_token']}",
    )
    assert changed.status_code == 200, changed.content
    assert not OAuthClientVerification.objects.filter(application=application).exists()


def test_only_operators_may_verify_clients(module_admin):
    registered = register(Client(), "Some agent", "https://agent.example/cb").json()
    application = Application.objects.get(client_id=registered["client_id"])
    browser = signed_in(
        staff_user(
            "app-editor",
            "oauth2_provider.view_application",
            "oauth2_provider.change_application",
        )
    )
    browser.post(
        "/admin/oauth2_provider/application/",
        {"action": "verify_clients", "_selected_action": [str(application.pk)]},
    )
    assert not OAuthClientVerification.objects.exists()


@pytest.mark.parametrize("name", ["Kit", "kit", "K I T", "\uff2b\uff49\uff54", "Kit Admin", "Kït"])
def test_self_registration_cannot_claim_kits_own_name(name):
    response = register(Client(), name, "https://evil.example/cb")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"
    assert "reserved" in response.json()["error_description"]


def test_the_claude_code_flow_still_works_and_names_the_loopback(module_admin):
    registered = register(Client(), "Claude Code").json()
    flow = Authorization(registered["client_id"])
    browser = signed_in(module_admin.user)
    page = browser.get(flow.url).content.decode()
    assert '<strong class="host">127.0.0.1</strong>' in page
    assert "an application on your own computer" in page
    code = flow.consent(browser, module_admin.account.slug)
    tokens = flow.exchange(Client(), code)
    assert tokens.status_code == 200, tokens.content
    assert tools_list(Client(), tokens.json()["access_token"]) == 200


# --- 3. Client management keeps the registration rules -----------------------------------------


def _update(registered: dict, redirect: str, name: str = "Tool"):
    return Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps(
            {
                "client_name": name,
                "redirect_uris": [redirect],
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code"],
                "response_types": ["code"],
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registered['registration_access_token']}",
    )


def test_client_update_cannot_add_a_plain_http_redirect_off_loopback():
    registered = register(Client(), "Tool").json()
    response = _update(registered, "http://evil.example/cb")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    application = Application.objects.get(client_id=registered["client_id"])
    assert application.redirect_uris == REDIRECT


def test_client_update_cannot_take_a_reserved_name():
    registered = register(Client(), "Tool").json()
    response = _update(registered, REDIRECT, name="Kit")
    assert response.status_code == 400
    assert Application.objects.get(client_id=registered["client_id"]).name == "Tool"


# --- 4. One member cannot spend another's write budget -----------------------------------------


def test_refused_writes_of_a_member_do_not_lock_out_the_admin(
    client, module_admin, member, settings
):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 3
    reader, admin_ = _bearer(member), _bearer(module_admin)
    for _ in range(10):
        refused = client.post("/api/v1/notes", SAVE, content_type="application/json", **reader)
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "not_module_admin"
    saved = client.post("/api/v1/notes", SAVE, content_type="application/json", **admin_)
    assert saved.status_code == 201


def test_each_member_has_their_own_budget_on_a_shared_client(client, account, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 2
    first, second = (factories.member(account, admin=True) for _ in range(2))
    one, two = _bearer(first), _bearer(second)
    for i in range(2):
        body = {**SAVE, "body": f"first admin {i}"}
        assert (
            client.post("/api/v1/notes", body, content_type="application/json", **one).status_code
            == 201
        )
    limited = client.post("/api/v1/notes", SAVE, content_type="application/json", **one)
    assert limited.status_code == 429
    body = {**SAVE, "body": "second admin"}
    assert (
        client.post("/api/v1/notes", body, content_type="application/json", **two).status_code
        == 201
    )


def test_mcp_refusals_by_role_are_not_counted(client, member, module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 1
    reader, admin_ = _bearer(member), _bearer(module_admin)

    def save(bearer):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "outreach_save_prospect_research", "arguments": SAVE},
        }
        reply = client.post("/mcp", json.dumps(message), content_type="application/json", **bearer)
        return reply.json()["result"]["structuredContent"]

    for _ in range(5):
        assert save(reader)["error"]["code"] == "not_module_admin"
    assert "data" in save(admin_)


# --- 5. Sign-in throttling and the registration limit ------------------------------------------


def _sign_in(browser: Client, username: str, password: str):
    page = browser.get("/accounts/login/")
    return browser.post(
        "/accounts/login/",
        {**form_fields(page.content.decode()), "username": username, "password": password},
    )


def test_failed_sign_ins_lock_the_account_name_even_for_the_right_password(member, settings):
    member.user.set_password("the-right-password-1")
    member.user.save()
    name = member.user.username
    for attempt in range(25):
        browser = Client(REMOTE_ADDR=f"10.0.{attempt}.1")  # a new address each time
        response = _sign_in(browser, name, f"wrong-{attempt}")
        if response.status_code == 429:
            break
    assert attempt == settings.AXES_FAILURE_LIMIT - 1
    locked = _sign_in(Client(REMOTE_ADDR="10.9.9.9"), name.upper(), "the-right-password-1")
    assert locked.status_code == 429
    page = locked.content.decode()
    assert "Too many failed sign-ins" in page
    assert "15 minutes" in page
    assert locked["Retry-After"] == "900"
    assert "_auth_user_id" not in Client().session


def test_failed_sign_ins_from_one_address_are_throttled_across_names(member, settings):
    member.user.set_password("the-right-password-1")
    member.user.save()
    browser = Client(REMOTE_ADDR="203.0.113.7")
    for attempt in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _sign_in(browser, f"guess{attempt}@example.com", "nope").status_code == 200
    # The failure that reaches the limit is answered with the lockout page already.
    assert _sign_in(browser, "guess-last@example.com", "nope").status_code == 429
    assert _sign_in(browser, member.user.username, "the-right-password-1").status_code == 429
    # Another address is not affected.
    other = _sign_in(
        Client(REMOTE_ADDR="198.51.100.2"), member.user.username, "the-right-password-1"
    )
    assert other.status_code == 302


def test_client_registration_is_limited_per_address(settings):
    settings.KIT_CLIENT_REGISTRATIONS_PER_HOUR = 10
    attacker = Client(REMOTE_ADDR="203.0.113.9")
    statuses = [register(attacker, f"Bot {i}").status_code for i in range(12)]
    assert statuses == [201] * 10 + [429] * 2
    refused = register(attacker, "Bot 13")
    assert refused.json()["error"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert register(Client(REMOTE_ADDR="198.51.100.3"), "Someone else").status_code == 201


def test_the_address_behind_a_trusted_proxy_is_the_clients(settings):
    settings.KIT_CLIENT_REGISTRATIONS_PER_HOUR = 1
    settings.KIT_PROXY_COUNT = 1
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    first = register(Client(**proxy), "A", HTTP_X_FORWARDED_FOR="203.0.113.1")
    second = register(Client(**proxy), "B", HTTP_X_FORWARDED_FOR="203.0.113.2")
    # A client cannot pick its own address by prepending one: the proxy's entry counts.
    spoofed = register(Client(**proxy), "C", HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.1")
    assert (first.status_code, second.status_code, spoofed.status_code) == (201, 201, 429)


# --- 6. A replayed authorization code revokes what its first use gave --------------------------


def test_replaying_an_authorization_code_revokes_its_tokens(module_admin):
    registered = register(Client(), "Agent").json()
    flow = Authorization(registered["client_id"])
    code = flow.consent(signed_in(module_admin.user), module_admin.account.slug)
    first = flow.exchange(Client(), code)
    assert first.status_code == 200
    tokens = first.json()
    # A refresh before the replay: the refreshed tokens descend from the code too.
    refreshed = refresh(Client(), registered["client_id"], tokens["refresh_token"]).json()
    assert tools_list(Client(), refreshed["access_token"]) == 200

    replay = flow.exchange(Client(), code)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert tools_list(Client(), tokens["access_token"]) == 401
    assert tools_list(Client(), refreshed["access_token"]) == 401
    again = refresh(Client(), registered["client_id"], refreshed["refresh_token"])
    assert again.status_code == 400


def test_a_code_for_another_client_does_not_revoke_anything(module_admin):
    registered = register(Client(), "Agent").json()
    other = register(Client(), "Other agent").json()
    flow = Authorization(registered["client_id"])
    code = flow.consent(signed_in(module_admin.user), module_admin.account.slug)
    stolen = Authorization(other["client_id"], verifier=flow.verifier)
    assert stolen.exchange(Client(), code).status_code == 400
    # The rightful client still redeems its unused code.
    assert flow.exchange(Client(), code).status_code == 200


# --- 7. Operator tokens never land on a self-registered client --------------------------------


def test_issue_token_does_not_reuse_a_squatted_client(client, module_admin):
    squatter = register(Client(), "Claude Code").json()
    bearer = _bearer(module_admin, client_name="Claude Code")
    token = AccessToken.objects.exclude(application__client_id=squatter["client_id"]).get(
        scope__contains="outreach"
    )
    assert token.application.registration_source == "manual"
    # The squatter deletes its client: the operator's token lives on.
    deleted = Client().delete(
        f"/o/register/{squatter['client_id']}/",
        HTTP_AUTHORIZATION=f"Bearer {squatter['registration_access_token']}",
    )
    assert deleted.status_code == 204
    saved = client.post("/api/v1/notes", SAVE, content_type="application/json", **bearer)
    assert saved.status_code == 201
    attribution = saved.json()["data"]["note"]["attribution"]["oauth_client"]
    assert attribution == "Claude Code"
    assert Note.objects.get().oauth_application == token.application


# --- 8. A malformed Content-Length on /mcp ---------------------------------------------------


@pytest.mark.parametrize("length", ["abc", "1e3", "-5", "١٢"])
def test_malformed_content_length_is_a_400(client, module_admin, length):
    response = client.post(
        "/mcp",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        CONTENT_LENGTH=length,
        **_bearer(module_admin),
    )
    assert response.status_code == 400
    assert "Content-Length" in response.json()["error"]["message"]


# --- 9. Content-Security-Policy and the demo seed ----------------------------------------------


@pytest.mark.parametrize(
    "path", ["/accounts/login/", "/admin/login/", "/api/docs/", "/health/", "/"]
)
def test_every_page_carries_a_strict_content_security_policy(client, module_admin, path):
    client.force_login(module_admin.user)
    policy = client.get(path, follow=True)["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy


def test_the_api_docs_page_has_no_inline_script_or_style(client):
    page = client.get(reverse("api-docs")).content.decode()
    assert "<style" not in page
    assert "<script>" not in page
    assert client.get(reverse("api-docs") + "?script=").status_code == 200


def test_seed_demo_refuses_to_run_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="--allow-insecure-demo"):
        call_command("seed_demo")
    assert not get_user_model().objects.filter(username="admin@kit.test").exists()
    settings.DEBUG = True
    call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert get_user_model().objects.get(username="admin@kit.test").is_superuser


# --- Second round: what an attacker found after the first fixes --------------------------------


@pytest.mark.parametrize(
    "uris",
    [
        ["https://ok.example/cb http://evil.example/cb"],
        ["http://127.0.0.1/cb\thttp://evil.example/cb"],
        ["https://ok.example/cb\nhttp://evil.example/cb"],
        ["http://[::1/cb"],
        ["https://ok.example/\x00cb"],
        "https://ok.example/cb",
    ],
)
def test_registration_refuses_redirect_uris_that_would_be_split_or_cannot_be_read(uris):
    response = Client().post(
        "/o/register/",
        json.dumps(
            {
                "client_name": "Smuggler",
                "redirect_uris": uris,
                "token_endpoint_auth_method": "none",
                "grant_types": ["authorization_code"],
            }
        ),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
    assert not Application.objects.filter(name="Smuggler").exists()


def test_client_update_refuses_a_redirect_uri_with_a_newline():
    registered = register(Client(), "Tool").json()
    response = _update(registered, "https://a.example/cb\nhttp://evil.example/cb")
    assert response.status_code == 400
    assert Application.objects.get(client_id=registered["client_id"]).redirect_uris == REDIRECT


@pytest.mark.parametrize(
    "name",
    [
        "Kit\u2122",
        "K\u0131t",
        "\u041ait",
        "\u039ait",
        "\u041a\u0456t",
        "\u03bait",
        "Kit\u00ae",
        "K\u200bit",
    ],
)
def test_look_alikes_of_a_reserved_name_are_refused(name):
    response = register(Client(), name, "https://evil.example/cb")
    assert response.status_code == 400
    reason = response.json()["error_description"]
    assert "reserved" in reason or "invisible or control" in reason


def test_names_that_merely_start_alike_are_fine():
    assert register(Client(), "Kitchen helper").status_code == 201


@pytest.mark.parametrize(
    "metadata",
    [
        {"client_name": None},
        {"client_name": "Bot\x00"},
        {
            "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
        {"grant_types": ["authorization_code", "password"]},
        {"grant_types": "authorization_code"},
    ],
)
def test_registration_refuses_bad_metadata_without_a_500(metadata):
    body = {
        "client_name": "Bot",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code"],
        **metadata,
    }
    response = Client().post("/o/register/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


def test_no_token_without_a_members_consent(module_admin):
    """A confidential client made by an operator still cannot use client_credentials."""
    application = Application.objects.create(
        name="Ops robot",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret="s3cret-s3cret-s3cret",
        hash_client_secret=False,
    )
    response = Client().post(
        "/o/token/",
        {
            "grant_type": "client_credentials",
            "client_id": application.client_id,
            "client_secret": "s3cret-s3cret-s3cret",
            "resource": "http://testserver/mcp",
        },
    )
    assert response.status_code in (400, 401)
    assert not AccessToken.objects.filter(application=application).exists()


def test_token_introspection_is_not_offered():
    assert Client().post("/o/introspect/", {"token": "x"}).status_code == 404
    metadata = Client().get("/.well-known/oauth-authorization-server").json()
    assert "introspection_endpoint" not in metadata


@pytest.mark.parametrize(
    "resource", ["http://testserver/", "http://testserver", "http://testserver/api/v1/notes"]
)
def test_tokens_are_issued_only_for_kits_two_resources(module_admin, resource):
    registered = register(Client(), "Agent").json()
    flow = Authorization(registered["client_id"])
    page = signed_in(module_admin.user).get(
        flow.url.replace("resource=", "x=") + "&resource=" + resource
    )
    assert page.status_code == 400
    assert "invalid_target" in page.content.decode()


def test_a_token_for_the_whole_origin_is_not_a_token_for_mcp_or_the_api(module_admin):
    token = AccessToken(
        user=module_admin.user,
        scope="outreach_read outreach_write",
        expires=timezone.now() + timedelta(hours=1),
        resource=["http://testserver/"],
    )
    set_token_value(token, "origin-wide-token-value")
    token.save()
    OAuthAccessTokenAccount.objects.create(access_token=token, account=module_admin.account)
    assert tools_list(Client(), "origin-wide-token-value") == 401
    api = Client().get(
        "/api/v1/recall?domain=acme.dev", HTTP_AUTHORIZATION="Bearer origin-wide-token-value"
    )
    assert api.status_code == 401


@pytest.mark.parametrize(
    "query",
    [
        {"client_id": "not-a-client"},
        {"redirect_uri": "https://elsewhere.example/cb"},
        {"resource": "http://[::1"},
    ],
)
def test_consent_page_errors_are_pages_not_500s(module_admin, query):
    registered = register(Client(), "Agent").json()
    flow = Authorization(registered["client_id"])
    url = flow.url
    for key, value in query.items():
        params = dict(parse_qsl(url.split("?", 1)[1]))
        params[key] = value
        url = "/o/authorize/?" + urlencode(params)
    page = signed_in(module_admin.user).get(url)
    assert page.status_code in (200, 400)
    assert "Connect “" not in page.content.decode()


def test_consent_for_an_account_the_member_does_not_have_is_refused_on_the_page(
    member, other_account
):
    registered = register(Client(), "Agent").json()
    flow = Authorization(registered["client_id"])
    browser = signed_in(member.user)
    page = browser.get(flow.url)
    answer = browser.post(
        flow.url,
        {**form_fields(page.content.decode()), "allow": "on", "account": other_account.slug},
    )
    assert answer.status_code == 200
    assert "is not one of the available choices" in answer.content.decode()
    assert not Grant.objects.exists()


@pytest.mark.parametrize(
    ("path", "data"),
    [
        ("/o/token/", {"grant_type": "authorization_code", "code": "x\x00", "client_id": "a"}),
        ("/o/token/", {"grant_type": "authorization_code", "code": "x", "client_id": "a\x00"}),
        ("/o/revoke_token/", {"token": "t", "client_id": "\x00"}),
        ("/accounts/login/", {"username": "a\x00b", "password": "x"}),
    ],
)
def test_nul_bytes_in_forms_are_a_400(path, data):
    response = Client().post(path, data)
    assert response.status_code == 400
    assert "NUL byte" in response.content.decode()


def test_nul_bytes_in_an_api_query_get_the_api_error_shape(client, module_admin):
    response = client.get(
        "/api/v1/recall?domain=acme.dev%00",
        HTTP_AUTHORIZATION=_bearer(module_admin)["HTTP_AUTHORIZATION"],
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize("param", ["page_size", "page"])
def test_unicode_digits_in_paging_are_a_400(client, module_admin, param):
    response = client.get(
        f"/api/v1/notes?{param}=%C2%B2",
        HTTP_AUTHORIZATION=_bearer(module_admin)["HTTP_AUTHORIZATION"],
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


@pytest.mark.django_db(transaction=True)
def test_two_exchanges_of_one_code_at_once_leave_no_token_alive(module_admin):
    for _ in range(4):
        registered = register(Client(), "Racer").json()
        flow = Authorization(registered["client_id"])
        code = flow.consent(signed_in(module_admin.user), module_admin.account.slug)
        barrier = threading.Barrier(2)
        answers = []

        def exchange(flow=flow, code=code, barrier=barrier, answers=answers):
            try:
                barrier.wait()
                answers.append(flow.exchange(Client(), code))
            finally:
                connection.close()

        threads = [threading.Thread(target=exchange) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 400], statuses
        issued = next(a for a in answers if a.status_code == 200).json()
        assert tools_list(Client(), issued["access_token"]) == 401


@pytest.mark.parametrize(
    "consumed_before", ["get_code_challenge", "get_code_challenge_method", "confirm_redirect_uri"]
)
def test_a_code_consumed_by_another_exchange_between_its_checks_is_a_replay(
    module_admin, monkeypatch, consumed_before
):
    """The race above, made certain: the other exchange ends the code after this one's
    validate_code and before one of its later reads of the grant. Found when the race test
    answered 500 (Grant.DoesNotExist) under load on 2026-12-06."""
    from oauth2_provider.models import get_grant_model

    from outreach.oauth import KitOAuth2Validator

    registered = register(Client(), "Racer").json()
    flow = Authorization(registered["client_id"])
    code = flow.consent(signed_in(module_admin.user), module_admin.account.slug)
    first = flow.exchange(Client(), code)  # the other exchange, which won
    assert first.status_code == 200
    real = getattr(KitOAuth2Validator, consumed_before)

    def after_the_other_exchange(self, *args, **kwargs):
        get_grant_model().objects.filter(code=code).delete()
        return real(self, *args, **kwargs)

    original_validate = KitOAuth2Validator.validate_code

    def validated_before_the_other_exchange(self, client_id, code_, client, request, *a, **k):
        request.scopes = ["outreach_read"]
        request.user = module_admin.user
        return True  # as it found the grant a moment before

    monkeypatch.setattr(KitOAuth2Validator, consumed_before, after_the_other_exchange)
    monkeypatch.setattr(KitOAuth2Validator, "validate_code", validated_before_the_other_exchange)
    second = flow.exchange(Client(), code)
    monkeypatch.setattr(KitOAuth2Validator, "validate_code", original_validate)
    assert second.status_code == 400
    assert second.json()["error"] == "invalid_grant"
    assert tools_list(Client(), first.json()["access_token"]) == 401  # a replay: revoked


# --- Third round: what the code review found ------------------------------------------------


def test_signing_in_to_another_account_does_not_clear_failures_against_a_victim(
    member, module_admin, settings
):
    for user, password in ((member.user, "victim-password-1"), (module_admin.user, "mine-1")):
        user.set_password(password)
        user.save()
    browser = Client(REMOTE_ADDR="198.51.100.50")
    for round_ in range(3):
        for attempt in range(2):
            _sign_in(browser, member.user.username, f"guess-{round_}-{attempt}")
        # The attacker signs in to their own account from the same address between guesses.
        assert _sign_in(
            Client(REMOTE_ADDR="198.51.100.50"), module_admin.user.username, "mine-1"
        ).status_code in (302, 429)
    locked = _sign_in(Client(REMOTE_ADDR="203.0.113.99"), member.user.username, "victim-password-1")
    assert locked.status_code == 429


def test_a_name_with_invisible_characters_is_refused():
    for name in ("\u202etiK\u202c", "Agent\u200d", "Bot\u0007"):
        response = register(Client(), name, "https://agent.example/cb")
        assert response.status_code == 400, name
        assert "invisible or control" in response.json()["error_description"]


def test_an_international_host_is_registered_and_shown_in_its_ascii_form(module_admin):
    host = "\u0441laude.ai"  # the first letter is Cyrillic: it would read as claude.ai
    refused = register(Client(), "Helper", f"https://{host}/cb")
    assert refused.status_code == 400
    assert "punycode" in refused.json()["error_description"]
    ascii_host = host.encode("idna").decode()
    registered = register(Client(), "Helper", f"https://{ascii_host}/cb").json()
    flow = Authorization(registered["client_id"], redirect=f"https://{ascii_host}/cb")
    page = signed_in(module_admin.user).get(flow.url).content.decode()
    assert f'<strong class="host">{ascii_host}</strong>' in page


def test_displayed_hosts_are_ascii():
    assert displayed_host("\u0441laude.ai").startswith("xn--")
    assert displayed_host("claude.ai") == "claude.ai"


@pytest.mark.parametrize(
    "uri",
    ["http://evil.example\\@localhost/cb", "http://user@localhost/cb", "https://a@b.example/cb"],
)
def test_redirect_uris_with_a_user_name_or_backslash_are_refused(uri):
    response = register(Client(), "Tool", uri)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


def test_a_client_update_cannot_switch_to_client_credentials():
    registered = register(Client(), "Tool").json()
    response = Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps(
            {
                "client_name": "Tool",
                "redirect_uris": [REDIRECT],
                "grant_types": ["client_credentials"],
                "token_endpoint_auth_method": "client_secret_basic",
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {registered['registration_access_token']}",
    )
    assert response.status_code == 400
    assert Application.objects.get(client_id=registered["client_id"]).authorization_grant_type == (
        "authorization-code"
    )


def test_a_client_update_without_its_registration_token_is_a_401_whatever_it_sends():
    registered = register(Client(), "Tool").json()
    response = Client().put(
        f"/o/register/{registered['client_id']}/",
        json.dumps({"redirect_uris": ["http://evil.example/cb"]}),
        content_type="application/json",
    )
    assert response.status_code == 401


def test_the_token_endpoint_refuses_a_resource_other_than_kits(module_admin):
    registered = register(Client(), "Agent").json()
    flow = Authorization(registered["client_id"])
    browser = signed_in(module_admin.user)
    url = flow.url.replace("&resource=http%3A%2F%2Ftestserver%2Fmcp", "")
    page = browser.get(url)
    answer = browser.post(
        url,
        {**form_fields(page.content.decode()), "allow": "on", "account": module_admin.account.slug},
    )
    code = parse_qs(urlsplit(answer["Location"]).query)["code"][0]
    response = Client().post(
        "/o/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": flow.redirect,
            "client_id": flow.client_id,
            "code_verifier": flow.verifier,
            "resource": "http://testserver/",
        },
    )
    assert response.status_code == 400, response.content[:500]
    assert response.json()["error"] == "invalid_target", response.content[:500]


def test_rest_checks_who_is_asking_before_reading_the_body(client, module_admin):
    anonymous = client.post("/api/v1/notes", "{", content_type="application/json")
    assert anonymous.status_code == 401
    reader = issue_token(module_admin, ["outreach_read"], client_name="Reader")
    scoped = client.post(
        "/api/v1/notes", "{", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {reader}"
    )
    assert scoped.status_code == 403
    assert scoped.json()["error"]["code"] == "insufficient_scope"


def test_refusals_for_the_account_do_not_spend_the_write_budget(client, module_admin, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 3
    bearer = _bearer(module_admin)
    account = module_admin.account
    account.outreach_addon = False
    account.save()
    for _ in range(5):
        refused = client.post("/api/v1/notes", SAVE, content_type="application/json", **bearer)
        assert refused.json()["error"]["code"] == "addon_required"
    account.outreach_addon = True
    account.save()
    for i in range(3):
        body = {**SAVE, "body": f"finding {i}"}
        assert (
            client.post(
                "/api/v1/notes", body, content_type="application/json", **bearer
            ).status_code
            == 201
        )


def test_web_session_writes_have_a_budget_per_member(account, settings):
    settings.KIT_WRITES_PER_MINUTE_PER_CLIENT = 2
    first, second = (factories.member(account, admin=True) for _ in range(2))
    one, two = signed_in(first.user), signed_in(second.user)
    for i in range(2):
        body = {**SAVE, "body": f"session finding {i}"}
        assert one.post("/api/v1/notes", body, content_type="application/json").status_code == 201
    assert one.post("/api/v1/notes", SAVE, content_type="application/json").status_code == 429
    body = {**SAVE, "body": "the other admin"}
    assert two.post("/api/v1/notes", body, content_type="application/json").status_code == 201
