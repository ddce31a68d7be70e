"""Moving code keeps app labels, table names and migrations: an existing database migrates
with no change, and the models need no new migration."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db
def test_the_models_need_no_new_migration():
    out = StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=out)
    except SystemExit:  # --check exits 1 when the models differ from their migrations
        pytest.fail(f"the models need a new migration:\n{out.getvalue()}")


@pytest.mark.django_db
def test_a_migrated_database_has_nothing_left_to_apply():
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
