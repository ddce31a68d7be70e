import pytest
from django.db import connection

#: A table of the statement toolkit's tests: ``ref`` is checked at commit, as every
#: foreign key Django makes is.
PROBE = "kit_sql_probe"


@pytest.fixture
def probe_table(transactional_db):
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE {PROBE} (id bigint PRIMARY KEY, tag text NOT NULL DEFAULT '', "
            f"ref bigint REFERENCES {PROBE} (id) DEFERRABLE INITIALLY DEFERRED)"
        )
    yield
    connection.close()  # another thread may have left its prepared statements on it
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {PROBE}")
