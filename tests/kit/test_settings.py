"""Settings come from the environment, with safe production defaults."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prospect_memory.core.crypto import generate_key

ROOT = Path(__file__).resolve().parents[2]

# Most of these start Django in a subprocess, with the environment production would have.
pytestmark = pytest.mark.slow


def _manage(*args, env):
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _production_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "kit.settings",
            "SECRET_KEY": "x" * 60 + "production-like-secret-key-Zq9!",
            "PROSPECT_MEMORY_ENCRYPTION_KEYS": generate_key(),
            "ALLOWED_HOSTS": "kit.example.com",
            "KIT_PUBLIC_URL": "https://kit.example.com",
            "KIT_DATA_DIR": str(tmp_path),
            # The test cluster, so no second server starts for this check.
            "DATABASE_URL": os.environ["DATABASE_URL"],
        }
    )
    for test_only in (
        "SECURE_SSL_REDIRECT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "PROSPECT_MEMORY_EMBEDDING_PROVIDER",
        "PROSPECT_MEMORY_EMBEDDING_OPTIONS",
    ):
        env.pop(test_only, None)
    return env


def test_check_deploy_is_clean_with_production_like_environment(tmp_path):
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=_production_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_asks_for_the_public_url(tmp_path):
    env = _production_env(tmp_path)
    del env["KIT_PUBLIC_URL"]
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0
    assert "kit.W002" in result.stderr


def test_check_deploy_flags_generated_development_secrets(tmp_path):
    env = _production_env(tmp_path)
    del env["SECRET_KEY"], env["PROSPECT_MEMORY_ENCRYPTION_KEYS"]
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0
    assert "kit.W001" in result.stderr
    assert "SECRET_KEY was generated" in result.stderr
    assert "PROSPECT_MEMORY_ENCRYPTION_KEYS was generated" in result.stderr
    # The generated secrets are kept private to the owner.
    assert (tmp_path / "encryption_key").stat().st_mode & 0o077 == 0


def test_check_deploy_warns_when_the_hashing_provider_serves(tmp_path):
    env = _production_env(tmp_path)
    env["PROSPECT_MEMORY_EMBEDDING_PROVIDER"] = "hashing"
    result = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode != 0
    assert "prospect_memory.W001" in result.stderr


def _provider(env) -> str:
    script = (
        "import django; django.setup(); "
        "from prospect_memory.core.embeddings import get_provider; print(get_provider().model)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_the_semantic_model_embeds_unless_gemini_or_another_provider_is_configured(tmp_path):
    env = _production_env(tmp_path)
    assert _provider(env) == "multilingual-e5-small-q4"
    assert _provider({**env, "GEMINI_API_KEY": "a-key"}) == "gemini-embedding-001/768"
    assert _provider({**env, "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "hashing"}) == (
        "kit-local-hash-v1"
    )


def test_debug_is_off_unless_asked(settings):
    from kit import settings as kit_settings

    assert "DEBUG" not in os.environ or os.environ["DEBUG"].lower() in {"0", "false", "off"}
    assert kit_settings.DEBUG is False


def test_bad_encryption_key_fails_the_system_check(tmp_path):
    env = _production_env(tmp_path)
    env["PROSPECT_MEMORY_ENCRYPTION_KEYS"] = "not-a-key"
    result = _manage("check", env=env)
    assert result.returncode != 0
    assert "prospect_memory.E001" in result.stderr
    assert "encryption key #1" in result.stderr


def _database_options(env) -> dict:
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.DATABASES['default']['OPTIONS']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_statements_are_bound_by_the_server_and_prepared_unless_turned_off(tmp_path):
    env = _production_env(tmp_path)
    # A database that drops packets, or a server that vanished while the connection idled,
    # is known in seconds.
    bounded = {
        "connect_timeout": 5,
        "keepalives": 1,
        "keepalives_idle": 10,
        "keepalives_interval": 5,
        "keepalives_count": 3,
    }
    assert _database_options(env) == {
        **bounded,
        "server_side_binding": True,
        "prepare_threshold": 5,
    }
    env["DATABASE_PREPARED_STATEMENTS"] = "false"
    assert _database_options(env) == {
        **bounded,
        "server_side_binding": True,
        "prepare_threshold": None,
    }


def test_a_misspelt_settings_key_is_refused_by_the_check_and_at_first_use(tmp_path):
    env = {**_production_env(tmp_path), "PROSPECT_MEMORY_EMBEDDING_PROVIDER": "hashing"}
    script = (
        "import django; from django.conf import settings; django.setup(); "
        "from prospect_memory.notes.conf import notes_settings; "
        "settings.PROSPECT_MEMORY['DAILY_SAVE_LIMT'] = 1; notes_settings.reload(); "
        "notes_settings.DAILY_SAVE_LIMIT"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "unknown PROSPECT_MEMORY setting(s): DAILY_SAVE_LIMT" in result.stderr


def test_the_system_check_names_a_misspelt_key(settings):
    from prospect_memory.core.checks import check_unknown_settings

    settings.BUSINESS_MEMORY = {"ACCOUNT_CAPACTY": 3}
    (error,) = check_unknown_settings(None)
    assert error.id == "prospect_memory.E005"
    assert "ACCOUNT_CAPACTY" in error.msg


def test_a_redis_cache_gives_up_on_a_silent_server_quickly(tmp_path):
    """``CACHE_URL=redis://...`` gets socket timeouts of a quarter of a second (a scrape
    of /metrics keeps its figures there); timeouts in the URL's query win."""
    env = _production_env(tmp_path)
    script = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.CACHES['default']))"
    )

    def cache_with(url):
        found = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env={**env, "CACHE_URL": url},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert found.returncode == 0, found.stderr
        return json.loads(found.stdout.strip().splitlines()[-1])

    shared = cache_with("redis://127.0.0.1:6379/3")
    assert shared["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert shared["OPTIONS"] == {"socket_connect_timeout": 0.25, "socket_timeout": 0.25}
    chosen = cache_with("redis://127.0.0.1:6379/3?socket_timeout=2")
    assert chosen["OPTIONS"] == {"socket_connect_timeout": 0.25, "socket_timeout": 2}
    assert not cache_with("locmemcache://").get("OPTIONS")


def test_a_reuse_of_infinite_seconds_stops_every_process_at_start(tmp_path):
    env = _production_env(tmp_path) | {"KIT_METRICS_DATABASE_REUSE_SECONDS": "inf"}
    done = _manage("check", env=env)
    assert done.returncode != 0
    assert "KIT_METRICS_DATABASE_REUSE_SECONDS is inf: give a finite number" in done.stderr
    done = _manage("check", env=env | {"KIT_METRICS_DATABASE_REUSE_SECONDS": "1e400"})
    assert "KIT_METRICS_DATABASE_REUSE_SECONDS is inf" in done.stderr  # read as Python does
