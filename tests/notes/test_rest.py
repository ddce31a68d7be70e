"""The REST API: every operation, its refusals, tenancy, and responses that match the schema."""

import pytest

from outreach.services import suppression_add
from prospect_memory.notes.models import Note
from tests import factories

pytestmark = pytest.mark.django_db

NOTE = {
    "domain": "founder@acme.dev",
    "title": "Funding",
    "body": "Acme raised a Series B of 40M led by Example Ventures.",
    "source_urls": ["https://acme.dev/blog/series-b"],
    "observed_at": "2026-11-20",
}


def save(api, **changes):
    return api.call("post", "/api/v1/notes", "/api/v1/notes", {**NOTE, **changes})


def test_recall_save_list_delete(api):
    empty = api.call("get", "/api/v1/recall", "/api/v1/recall", domain="acme.dev")
    assert empty.status_code == 200
    assert empty.json()["data"]["known"] is False

    saved = save(api)
    assert saved.status_code == 201
    note = saved.json()["data"]["note"]
    assert note["attribution"] == {"member": "admin@example.com", "oauth_client": "REST client"}
    twin = save(api, body=NOTE["body"].replace("raised", "has raised"))
    assert twin.json()["data"]["overlap"]["near_duplicates"][0]["id"] == note["id"]

    recall = api.call("get", "/api/v1/recall", "/api/v1/recall", domain="https://www.acme.dev/")
    assert recall.json()["data"]["note_count"] == 2

    listing = api.call("get", "/api/v1/notes", "/api/v1/notes", domain="acme.dev", page_size=1)
    body = listing.json()["data"]
    assert (body["count"], body["pages"], len(body["notes"])) == (2, 2, 1)
    assert body["notes"][0]["domain"] == "acme.dev"

    deleted = api.call("delete", f"/api/v1/notes/{note['id']}", "/api/v1/notes/{note_id}")
    assert deleted.status_code == 200
    assert deleted.json()["data"]["note_count"] == 1
    gone = api.call("delete", f"/api/v1/notes/{note['id']}", "/api/v1/notes/{note_id}")
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "not_found"


def test_compact_and_restore(api):
    for i in range(3):
        save(api, body=f"fact {i}", source_urls=[f"https://acme.dev/{i}"])
    mismatch = api.call(
        "post",
        "/api/v1/compactions",
        "/api/v1/compactions",
        {"domain": "acme.dev", "expected_note_count": 2, "body": "merged"},
    )
    assert mismatch.status_code == 409
    assert mismatch.json()["error"]["code"] == "note_count_mismatch"
    merged = api.call(
        "post",
        "/api/v1/compactions",
        "/api/v1/compactions",
        {"domain": "acme.dev", "expected_note_count": 3, "body": "merged"},
    )
    assert merged.status_code == 201
    compaction = merged.json()["data"]["compaction_id"]
    restored = api.call(
        "post",
        f"/api/v1/compactions/{compaction}/restore",
        "/api/v1/compactions/{compaction_id}/restore",
    )
    assert restored.status_code == 200
    assert restored.json()["data"]["note_count"] == 3
    again = api.call(
        "post",
        f"/api/v1/compactions/{compaction}/restore",
        "/api/v1/compactions/{compaction_id}/restore",
    )
    assert again.status_code == 400
    assert again.json()["error"]["details"]["reason"] == "already_restored"


def test_writing_guide(api):
    guide = api.call("get", "/api/v1/writing-guides/en", "/api/v1/writing-guides/{locale}")
    assert guide.status_code == 200
    assert guide.json()["data"]["locale"] == "en"
    unknown = api.call("get", "/api/v1/writing-guides/it", "/api/v1/writing-guides/{locale}")
    assert unknown.status_code == 400
    assert "en, de, fr, es, pl" in unknown.json()["error"]["message"]


@pytest.mark.parametrize(
    ("changes", "status", "code"),
    [
        ({"domain": "localhost"}, 400, "invalid_domain"),
        ({"body": "x" * 10_241}, 413, "body_too_large"),
        ({"source_urls": ["javascript:alert(1)"]}, 400, "validation_error"),
        ({"observed_at": "2099-01-01"}, 400, "validation_error"),
        ({"colour": "red"}, 400, "validation_error"),
        ({"source_urls": "https://acme.dev"}, 400, "validation_error"),
    ],
)
def test_bad_input_gets_the_error_envelope(api, changes, status, code):
    response = save(api, **changes)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert not Note.objects.exists()


def test_malformed_json_is_a_400(client, module_admin):
    from tests.helpers import token as issue

    response = client.post(
        "/api/v1/notes",
        data="{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {issue(module_admin)}",
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


def test_limits_answer_409_and_429_with_retry_after(api, limits):
    limits(DOMAIN_NOTE_LIMIT=1, DAILY_SAVE_LIMIT=2)
    save(api)
    full = save(api, body="second")
    assert full.status_code == 409
    assert full.json()["error"]["code"] == "domain_note_limit_reached"
    save(api, domain="other.dev")
    quota = save(api, domain="third.dev")
    assert quota.status_code == 429
    assert quota.json()["error"]["code"] == "daily_limit_reached"
    assert 0 < int(quota["Retry-After"]) <= 86_400


def test_list_filters_and_validates(api):
    save(api, observed_at="2026-01-01")
    save(api, body="fresh", observed_at="2026-11-29")
    stale = api.call("get", "/api/v1/notes", "/api/v1/notes", stale="true")
    assert [n["observed_at"] for n in stale.json()["data"]["notes"]] == ["2026-01-01"]
    bad = api.call("get", "/api/v1/notes", "/api/v1/notes", page_size="500")
    assert bad.status_code == 400


# --- authentication and authorization ---------------------------------------------------


def test_no_credentials_is_401_with_a_challenge(client, openapi):
    from tests.rest import Api

    response = Api(client, None, openapi).call(
        "get", "/api/v1/recall", "/api/v1/recall", domain="a.dev"
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert (
        'resource_metadata="http://testserver/.well-known/oauth-protected-resource/api"'
        in response["WWW-Authenticate"]
    )


def test_bad_token_is_401(client):
    response = client.get("/api/v1/recall?domain=a.dev", HTTP_AUTHORIZATION="Bearer nope")
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_token_for_another_resource_is_refused(api_for, module_admin):
    from oauth2_provider.models import AccessToken

    from outreach.models import OAuthAccessTokenAccount  # noqa: F401

    api = api_for(module_admin)
    AccessToken.objects.update(resource=["http://testserver/mcp"])
    response = api.call("get", "/api/v1/recall", "/api/v1/recall", domain="acme.dev")
    assert response.status_code == 401


def test_read_only_token_cannot_save(api_for, module_admin):
    reader = api_for(module_admin, scopes=["outreach_read"])
    assert reader.call("get", "/api/v1/recall", "/api/v1/recall", domain="a.dev").status_code == 200
    response = save(reader)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "insufficient_scope"
    assert 'error="insufficient_scope"' in response["WWW-Authenticate"]


def test_member_who_is_not_module_admin_cannot_write(api_for, member):
    api = api_for(member)
    response = save(api)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "not_module_admin"
    compact = api.call(
        "post",
        "/api/v1/compactions",
        "/api/v1/compactions",
        {"domain": "acme.dev", "expected_note_count": 0, "body": "merged"},
    )
    assert compact.status_code == 403
    assert compact.json()["error"]["code"] == "not_module_admin"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"outreach_addon": False}, "addon_required"),
        ({"subscription_status": "past_due"}, "subscription_inactive"),
    ],
)
def test_account_without_addon_or_subscription(api_for, changes, code):
    account = factories.account(**changes)
    api = api_for(factories.member(account, admin=True))
    response = api.call("get", "/api/v1/recall", "/api/v1/recall", domain="acme.dev")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == code


def test_another_account_sees_nothing(api, api_for, other_admin, account):
    note = save(api).json()["data"]["note"]
    prospect = factories.prospect(factories.campaign(account), "ceo@acme.dev")
    factories.reply(prospect, "bounce")
    suppression_add(account=account, kind="domain", value="acme.dev")
    theirs = api_for(other_admin)
    recall = theirs.call("get", "/api/v1/recall", "/api/v1/recall", domain="acme.dev").json()[
        "data"
    ]
    assert (recall["note_count"], recall["should_stop"], recall["relationship"]["suppressed"]) == (
        0,
        False,
        False,
    )
    listing = theirs.call("get", "/api/v1/notes", "/api/v1/notes").json()["data"]
    assert listing["count"] == 0
    gone = theirs.call("delete", f"/api/v1/notes/{note['id']}", "/api/v1/notes/{note_id}")
    assert gone.status_code == 404
    assert Note.objects.filter(id=note["id"]).exists()
    compact = theirs.call(
        "post",
        "/api/v1/compactions",
        "/api/v1/compactions",
        {
            "domain": "acme.dev",
            "expected_note_count": 1,
            "body": "x",
            "note_ids": [note["id"], note["id"]],
        },
    )
    assert compact.status_code == 400  # duplicate ids; and never touches account one's note
    assert Note.objects.get(id=note["id"]).status == "active"


def test_session_auth_needs_csrf(module_admin):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(module_admin.user)
    assert browser.get("/api/v1/recall?domain=acme.dev").status_code == 200
    refused = browser.post("/api/v1/notes", data=NOTE, content_type="application/json")
    assert refused.status_code == 403
    assert not Note.objects.exists()


def test_unknown_api_path_is_a_404_envelope(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_method_not_allowed(api):
    response = api.client.put("/api/v1/recall", HTTP_AUTHORIZATION=f"Bearer {api.token}")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_docs_and_schema_are_served_without_outside_assets(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "cdn." not in html
    assert "https://" not in html.replace("https://swagger.io", "")


def test_oversized_request_is_a_413_envelope(api):
    response = save(api, body="x" * 2_000_000)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


def test_openapi_schema_validates_without_warnings():
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    assert "openapi: 3.1.0" in out.getvalue()


def test_regression_huge_page_numbers_are_a_400_not_a_500(api):
    save(api)
    huge = api.call("get", "/api/v1/notes", "/api/v1/notes", page="99999999999999999999")
    assert huge.status_code == 400
    beyond = api.call("get", "/api/v1/notes", "/api/v1/notes", page="5000")
    assert beyond.status_code == 200
    assert beyond.json()["data"]["notes"] == []


def test_regression_integers_beyond_64_bits_are_answered_not_500(api):
    save(api)
    response = api.call(
        "post",
        "/api/v1/compactions",
        "/api/v1/compactions",
        {"domain": "acme.dev", "expected_note_count": 2**70, "body": "merged"},
    )
    assert response.status_code == 409
    assert response.json()["error"]["details"]["expected"] == 2**70


def test_regression_an_unknown_api_path_is_a_json_404_even_with_a_session(client, module_admin):
    client.force_login(module_admin.user)
    response = client.post(
        "/api/v1/business-memory/entries/k/versions/null/restore",
        {},
        content_type="application/json",
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
