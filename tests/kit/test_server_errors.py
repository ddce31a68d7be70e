"""An unexpected failure answers API clients in Kit's error envelope, people with a page."""

import pytest
from django.db import connection

from prospect_memory.business.models import Entry, EntryEvent
from tests.helpers import bearer, held_elsewhere

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing_events():
    """The entries' event table refuses every row: a store fails inside its transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION kit_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'events refused'; END $$"
        )
        cursor.execute(
            f"CREATE TRIGGER kit_test_refuse BEFORE INSERT ON {EntryEvent._meta.db_table} "
            "FOR EACH ROW EXECUTE FUNCTION kit_test_refuse()"
        )


def test_an_api_client_gets_a_json_500_and_nothing_is_written(client, module_admin, failing_events):
    client.raise_request_exception = False
    response = client.post(
        "/api/v1/business-memory/entries",
        {"key": "brand_voice", "value": {"tone": "warm"}},
        content_type="application/json",
        **bearer(module_admin),
    )
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "server_error"
    assert not Entry.objects.exists()


def test_a_person_gets_the_page(rf):
    from kit.views import server_error

    response = server_error(rf.get("/business-memory/"))
    assert response.status_code == 500
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.django_db(transaction=True)
def test_a_lock_not_had_in_time_is_a_503_to_retry_and_nothing_is_written(client, module_admin):
    from prospect_memory.business.models import Shelf

    def store(value):
        return client.post(
            "/api/v1/business-memory/entries",
            {"key": "brand_voice", "value": value},
            content_type="application/json",
            **bearer(module_admin),
        )

    assert store({"tone": "warm"}).status_code == 201
    shelf = f"SELECT FROM {Shelf._meta.db_table} FOR UPDATE"
    try:
        with held_elsewhere(shelf):
            with connection.cursor() as cursor:  # as an operator's role setting would
                cursor.execute("SET lock_timeout = '100ms'")
            client.raise_request_exception = False
            response = store({"tone": "cold"})
    finally:
        connection.close()
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    error = response.json()["error"]
    assert error["code"] == "service_unavailable"
    assert "in time" in error["message"]
    assert Entry.objects.get(key="brand_voice").version == 1
