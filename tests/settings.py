"""Settings for the test suite: Kit's settings over a throwaway embedded PostgreSQL.

Unless DATABASE_URL is set (it must then have pgvector), each test run starts its own
PostgreSQL 18 + pgvector cluster in a temporary directory and deletes it at exit. The URL
is exported so processes the tests start (live servers, workers) reach the same server.
"""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("SESSION_COOKIE_SECURE", "false")
os.environ.setdefault("CSRF_COOKIE_SECURE", "false")
os.environ.setdefault("SECRET_KEY", "kit-test-secret-key-not-for-production-use-0123456789")

_scratch = Path(tempfile.mkdtemp(prefix="kit-test-"))
os.environ.setdefault("KIT_DATA_DIR", str(_scratch / "data"))

# The suite embeds with the hashing provider (fast, no model to load), and so do the
# servers and workers it starts; the tests about the semantic model build it themselves.
# Its thresholds are pinned at the product page's 0.10 / 0.30: the tests about overlap are
# written against them (the hashing provider's calibrated ones are in core/embeddings/thresholds.json).
os.environ.setdefault("PROSPECT_MEMORY_EMBEDDING_PROVIDER", "hashing")
os.environ.setdefault(
    "PROSPECT_MEMORY_EMBEDDING_OPTIONS", '{"near_duplicate_distance": 0.1, "overlap_distance": 0.3}'
)

if not os.environ.get("PROSPECT_MEMORY_ENCRYPTION_KEYS"):
    from prospect_memory.core.crypto import generate_key

    os.environ["PROSPECT_MEMORY_ENCRYPTION_KEYS"] = generate_key()

if not os.environ.get("DATABASE_URL"):
    from kit.db import database_url, throwaway_database

    os.environ["DATABASE_URL"] = database_url(throwaway_database(_scratch))

from kit.settings import *  # noqa: E402, F403

# Fast hashing for the suite; PBKDF2 stays available for users a live server signs in.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.MD5PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

# Tasks run inline unless a test starts a real worker (tests/notes/test_tasks.py),
# which uses the broker at CELERY_BROKER_URL (Redis in CI) or the in-memory transport.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or "memory://"
CELERY_TASK_ALWAYS_EAGER = True

# A table no erasure knows about: the erasure scan must catch what it keeps.
INSTALLED_APPS = [*INSTALLED_APPS, "tests.forgetful.apps.ForgetfulConfig"]  # noqa: F405
