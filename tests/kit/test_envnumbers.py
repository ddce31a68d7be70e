"""Numbers from the environment are checked for their range as the settings load
(kit/envnumbers.py): a value out of range stops the start, naming the variable."""

import environ
import pytest
from django.core.exceptions import ImproperlyConfigured

from kit.envnumbers import seconds, whole

ENV = environ.Env()


@pytest.mark.parametrize("given", ["inf", "-inf", "nan", "1e400", "-0.5"])
def test_a_length_of_time_that_is_not_finite_and_0_or_more_stops_the_start(monkeypatch, given):
    monkeypatch.setenv("KIT_METRICS_DATABASE_REUSE_SECONDS", given)
    with pytest.raises(ImproperlyConfigured) as refused:
        seconds(ENV, "KIT_METRICS_DATABASE_REUSE_SECONDS", 30.0)
    assert str(refused.value).startswith("KIT_METRICS_DATABASE_REUSE_SECONDS is ")
    assert "a finite number, 0 or more (default: 30.0)" in str(refused.value)


def test_a_length_of_time_in_range_is_taken_and_unset_is_the_default(monkeypatch):
    monkeypatch.setenv("KIT_READINESS_REUSE_SECONDS", "0")
    assert seconds(ENV, "KIT_READINESS_REUSE_SECONDS", 5.0) == 0.0
    monkeypatch.delenv("KIT_READINESS_REUSE_SECONDS")
    assert seconds(ENV, "KIT_READINESS_REUSE_SECONDS", 5.0) == 5.0


def test_a_wait_that_must_be_more_than_0_refuses_0(monkeypatch):
    monkeypatch.setenv("KIT_READINESS_BROKER_TIMEOUT_SECONDS", "0")
    with pytest.raises(ImproperlyConfigured, match="more than 0"):
        seconds(ENV, "KIT_READINESS_BROKER_TIMEOUT_SECONDS", 0.5, more_than_zero=True)


def test_a_count_below_its_least_stops_the_start(monkeypatch):
    monkeypatch.setenv("KIT_PROXY_COUNT", "-1")
    with pytest.raises(ImproperlyConfigured, match="KIT_PROXY_COUNT is -1: give a whole number"):
        whole(ENV, "KIT_PROXY_COUNT", 0)
    monkeypatch.setenv("KIT_SIGNIN_FAILURE_LIMIT", "0")
    with pytest.raises(ImproperlyConfigured, match="of 1 or more"):
        whole(ENV, "KIT_SIGNIN_FAILURE_LIMIT", 5, least=1)
    monkeypatch.setenv("KIT_WRITES_PER_MINUTE_PER_CLIENT", "0")  # 0: no limit, taken
    assert whole(ENV, "KIT_WRITES_PER_MINUTE_PER_CLIENT", 60) == 0


@pytest.mark.parametrize("given", ["soon", "1e4x", "5s"])
def test_what_is_no_number_is_refused_naming_the_variable(monkeypatch, given):
    monkeypatch.setenv("DATABASE_REPLICA_RETRY_SECONDS", given)
    with pytest.raises(ImproperlyConfigured) as refused:
        seconds(ENV, "DATABASE_REPLICA_RETRY_SECONDS", 5.0)
    assert str(refused.value) == (
        f"DATABASE_REPLICA_RETRY_SECONDS is {given!r}: give a finite number, 0 or more "
        "(default: 5.0)"
    )


def test_a_number_in_another_spelling_is_read_as_python_reads_it(monkeypatch):
    monkeypatch.setenv("DATABASE_HEALTH_CHECK_IDLE_SECONDS", " 2.5e1 ")
    assert seconds(ENV, "DATABASE_HEALTH_CHECK_IDLE_SECONDS", 5.0) == 25.0


def test_a_negative_retention_stops_the_start(tmp_path):
    """The retention variables go through the same check (kit/settings.py)."""
    import subprocess
    import sys

    from tests.kit.test_settings import ROOT, _production_env

    env = _production_env(tmp_path) | {"KIT_RETENTION_USAGE_EVENTS_DAYS": "-30"}
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode != 0
    assert "KIT_RETENTION_USAGE_EVENTS_DAYS is -30: give a whole number of 0 or more" in (
        done.stderr
    )
