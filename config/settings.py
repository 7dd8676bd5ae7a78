"""Settings, read from the environment.

Embedded default (no environment): SQLite in var/, Celery on a filesystem broker in var/broker
(`make run` starts the worker), DEBUG on, a fixed dev secret.
Real mode: DATABASE_URL (PostgreSQL), CELERY_BROKER_URL (Redis), DJANGO_SECRET_KEY, DJANGO_DEBUG=0.
`config.settings_production` tightens the security settings for `check --deploy`.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", True)
# The fallback key only ever serves the embedded development default; production settings refuse it.
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-set-DJANGO_SECRET_KEY-in-production")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",  # runserver serves static files through WhiteNoise too
    "django.contrib.staticfiles",
    "django.forms",  # built-in widget templates for the TemplatesSetting form renderer below
    "django_htmx",
    "django_filters",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "placement",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # HTML and JSON compressed (static files come precompressed from WhiteNoise above); Django's
    # middleware pads each response against BREACH. ETags: pages drawn from the catalog set their
    # own (placement.catalog.page_cache); every other read gets one from its content.
    "django.middleware.gzip.GZipMiddleware",
    "placement.catalog.page_cache.ContentETagMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: turns a lockout during login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

# Widgets render through TEMPLATES, so the widget templates in placement/common/templates are found.
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # Site-wide templates (base, login) and each concept package's own: placement/<concept>/templates.
        "DIRS": [BASE_DIR / "templates", *sorted((BASE_DIR / "placement").glob("*/templates"))],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # Last: a page rendered for the cache gets placeholders for the user's parts.
                "placement.catalog.page_cache.donut",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

VAR_DIR = Path(os.environ.get("ATLAS_VAR_DIR", BASE_DIR / "var"))
if "DATABASE_URL" not in os.environ:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded SQLite database lives here
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'atlas.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded web server and worker write the same file: wait for the lock instead of failing,
    # take it at the start of a transaction (no upgrade deadlock), and let readers go on (WAL).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins for one username from
# one address, that pair is locked for the cool-off (/login/, /admin/login/ and bad API tokens,
# see placement.access.authentication). Per username *and* address, so nobody can lock a colleague
# out from elsewhere. The address is the client's as the trusted proxies report it
# (placement/access/client_address.py): behind N proxies that append to X-Forwarded-For set
# ATLAS_TRUSTED_PROXY_COUNT=N (docs/production.md "Proxy"); 0 = REMOTE_ADDR.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("ATLAS_LOGIN_THROTTLING", True)
AXES_FAILURE_LIMIT = int(os.environ.get("ATLAS_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(os.environ.get("ATLAS_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
ATLAS_TRUSTED_PROXY_COUNT = int(os.environ.get("ATLAS_TRUSTED_PROXY_COUNT", "0"))
ATLAS_FORWARDED_FOR_HEADER = "HTTP_" + os.environ.get("ATLAS_FORWARDED_FOR_HEADER", "X-Forwarded-For").upper().replace("-", "_")
AXES_CLIENT_IP_CALLABLE = "placement.access.client_address.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns on a missing root
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # collectstatic writes content-hashed names (served with a far-future, immutable Cache-Control)
    # and gzip copies; `make run` collects before serving, production must run it on deploy.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Atlas behaviour
ATLAS_CATALOG_DIR = BASE_DIR / "fixtures" / "catalog"
# Reading needs a login unless this opens read access to anonymous users (the embedded default does).
ATLAS_ANONYMOUS_READ = env_bool("ATLAS_ANONYMOUS_READ", True)
# The embed pages (/embed/map/, /embed/stacks/<id>/) are framed by other portals, whose visitors
# have no Atlas login: this opens them (read-only) to anonymous visitors whatever the read rule.
ATLAS_PUBLIC_EMBEDS = env_bool("ATLAS_PUBLIC_EMBEDS", True)
# Headless Chromium that prints a decision's board pack to PDF (Debian's chromium); a missing one
# makes /decisions/<id>/pack.pdf answer 503 with this path, the HTML and Markdown packs still work.
ATLAS_CHROMIUM = os.environ.get("ATLAS_CHROMIUM", "/usr/bin/chromium")
ATLAS_PDF_TIMEOUT = float(os.environ.get("ATLAS_PDF_TIMEOUT", "20"))

# Compose's search budget (placement.rules.SearchBudget, issue 37): pool-option combinations scored
# and (pools x scheduler x admission) combinations checked per request. The defaults answer the
# largest request (8 workload classes) in about a second on one core, with a note when they cut.
ATLAS_COMPOSE_POOL_COMBINATIONS = int(os.environ.get("ATLAS_COMPOSE_POOL_COMBINATIONS", "8000"))
ATLAS_COMPOSE_COMBINATIONS = int(os.environ.get("ATLAS_COMPOSE_COMBINATIONS", "100000"))

# A cluster upload's files are read in the web worker: past this many seconds of reading the upload
# is refused, well before gunicorn's 30 s timeout would kill the worker (150,000 pods read in ~7 s
# on a loaded 2-core machine; 128 MiB of the slowest JSON to parse would take ~80 s).
ATLAS_SNAPSHOT_READ_SECONDS = float(os.environ.get("ATLAS_SNAPSHOT_READ_SECONDS", "20"))

# Simulation runs: a run whose worker wrote no progress for this long is requeued (once) or failed.
ATLAS_RUN_HEARTBEAT_TIMEOUT = int(os.environ.get("ATLAS_RUN_HEARTBEAT_TIMEOUT", "120"))
ATLAS_RUN_MAX_ATTEMPTS = int(os.environ.get("ATLAS_RUN_MAX_ATTEMPTS", "2"))

# Run limits (docs/simulator-model.md "Run limits"). Beyond the scenario-wide limits of
# scheduler_core.scenario.limits, one run here may use at most this many GPUs and jobs and a predicted peak
# of this much memory; a bigger one is refused with a 400 before it is queued. The defaults admit
# 4x the 1,024-GPU / 50,000-job benchmark case (< 60 s, < 2 GiB) in jobs and 16x in GPUs.
ATLAS_RUN_MAX_GPUS = int(os.environ.get("ATLAS_RUN_MAX_GPUS", "16384"))
ATLAS_RUN_MAX_JOBS = int(os.environ.get("ATLAS_RUN_MAX_JOBS", "200000"))
ATLAS_RUN_MEMORY_BUDGET_MB = int(os.environ.get("ATLAS_RUN_MEMORY_BUDGET_MB", "1024"))
# A run whose estimated time (scheduler_core.scenario.limits.estimate_seconds x this factor) exceeds
# ATLAS_RUN_SOFT_TIME_LIMIT is refused before queueing; > 1 for workers slower than the benchmark's.
ATLAS_RUN_SPEED_FACTOR = float(os.environ.get("ATLAS_RUN_SPEED_FACTOR", "1.0"))
# Each worker pool process gets this address-space limit (RLIMIT_AS): a run that outgrows it fails
# with a MemoryError, recorded as the run's reason, and the worker lives on. 0 = no limit.
ATLAS_WORKER_MEMORY_LIMIT_MB = int(os.environ.get("ATLAS_WORKER_MEMORY_LIMIT_MB", "2048"))
# Queued or running runs one user may have at once (a 4-stack x 20-seed sweep is 80).
ATLAS_RUN_MAX_ACTIVE_PER_USER = int(os.environ.get("ATLAS_RUN_MAX_ACTIVE_PER_USER", "100"))
# Broker outage: submit fails fast (one connection attempt of this many seconds, no publish retry)
# with a 503. The sweep re-sends runs that never reached the broker after the grace period and
# fails runs no worker picked up within the queue timeout.
ATLAS_BROKER_CONNECT_TIMEOUT = float(os.environ.get("ATLAS_BROKER_CONNECT_TIMEOUT", "1"))
# A hung broker (accepts connections, never answers): a publish waits at most this much longer.
ATLAS_BROKER_PUBLISH_TIMEOUT = float(os.environ.get("ATLAS_BROKER_PUBLISH_TIMEOUT", "1.5"))
ATLAS_RUN_SEND_GRACE = int(os.environ.get("ATLAS_RUN_SEND_GRACE", "60"))
ATLAS_RUN_QUEUE_TIMEOUT = int(os.environ.get("ATLAS_RUN_QUEUE_TIMEOUT", "21600"))
# A queued run is a promise kept by the database, not the broker: `sweep_stale_runs` (and a
# resubmission) sends a run still queued this long after its last send again, with the same task
# id; a broker restarted without persistence loses nothing accepted (docs/deploy.md "Broker").
ATLAS_RUN_RESEND_AFTER = int(os.environ.get("ATLAS_RUN_RESEND_AFTER", "180"))
# Catalog entries whose facts (landscape as_of, derived from the sources read) are older than this
# are marked stale on their pages and in the API; `manage.py refresh_catalog` files what changed.
ATLAS_CATALOG_STALE_DAYS = int(os.environ.get("ATLAS_CATALOG_STALE_DAYS", "365"))
# The run page's verdict band (~60 short simulations) is computed in a task stopped after this (s).
ATLAS_BAND_TIME_LIMIT = int(os.environ.get("ATLAS_BAND_TIME_LIMIT", "120"))
# "Try on a control plane": a trial (building missing binaries, starting the plane, the controllers acting,
# stopping it) is stopped after this many seconds (s); a trial whose worker wrote no progress for
# ATLAS_TRIAL_HEARTBEAT_TIMEOUT is taken as lost, so the next one may start (one plane at a time: its ports).
ATLAS_TRIAL_TIME_LIMIT = int(os.environ.get("ATLAS_TRIAL_TIME_LIMIT", "2400"))
ATLAS_TRIAL_HEARTBEAT_TIMEOUT = int(os.environ.get("ATLAS_TRIAL_HEARTBEAT_TIMEOUT", "900"))

# Webhook targets in private networks an operator allows (comma-separated CIDRs, e.g.
# "10.20.0.0/16"); every other loopback, private, link-local, multicast or reserved address is
# refused (placement/decisions/outbound.py, docs/production.md "Webhooks").
ATLAS_WEBHOOK_ALLOWED_NETWORKS = [n.strip() for n in os.environ.get("ATLAS_WEBHOOK_ALLOWED_NETWORKS", "").split(",") if n.strip()]

# Celery. Real mode: CELERY_BROKER_URL (Redis). Embedded default: Kombu's filesystem transport
# under var/broker (no server to run); `make run` starts a worker beside the web server, so a
# submitted run returns at once and its progress moves as in real mode. ATLAS_CELERY_EAGER=1 runs
# tasks in-process instead (the test suite does that for the pages' tests).
_BROKER_FROM_ENV = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = env_bool("ATLAS_CELERY_EAGER", False) and not _BROKER_FROM_ENV
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND", _BROKER_FROM_ENV or None)
if _BROKER_FROM_ENV:
    CELERY_BROKER_URL = _BROKER_FROM_ENV
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int(os.environ.get("ATLAS_VISIBILITY_TIMEOUT", "900")),
        "socket_connect_timeout": ATLAS_BROKER_CONNECT_TIMEOUT,
    }
elif CELERY_TASK_ALWAYS_EAGER:
    # Eager apply_async still opens a producer: the in-memory transport never touches the network.
    CELERY_BROKER_URL = "memory://"
else:
    BROKER_DIR = VAR_DIR / "broker"
    for _folder in ("queue", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "polling_interval": 0.5,
    }
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = int(os.environ.get("ATLAS_RUN_SOFT_TIME_LIMIT", "600"))
CELERY_TASK_TIME_LIMIT = int(os.environ.get("ATLAS_RUN_TIME_LIMIT", "660"))
# Runs store their results in the database; a Celery result backend would only add a second
# connection that retries for ~20 s when Redis is down.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_PUBLISH_RETRY = False
# Recycle a pool process whose resident memory grew past 3/4 of its limit after a task (KiB).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = ATLAS_WORKER_MEMORY_LIMIT_MB * 768 or None
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# The cache of pages and API payloads drawn from the catalog (placement.catalog.page_cache), keyed on the
# catalog version, never expired by time. Real mode: the Redis the deployment runs (ATLAS_CACHE_URL,
# default the Celery broker's URL when that is Redis; give Redis a maxmemory with allkeys-lru so
# old versions' pages make room); otherwise this process' memory.
ATLAS_CACHE_URL = os.environ.get("ATLAS_CACHE_URL", _BROKER_FROM_ENV if _BROKER_FROM_ENV.startswith("redis") else "")
if ATLAS_CACHE_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": ATLAS_CACHE_URL,
                          "KEY_PREFIX": "atlas", "TIMEOUT": None}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "atlas",
                          "TIMEOUT": None}}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "placement.access.authentication.ThrottledTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["placement.access.permissions.AtlasApiPermission"],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
        "rest_framework.filters.SearchFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "placement.common.errors.atlas_exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
}

SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Placement Atlas API",
    "DESCRIPTION": "Projects placed on the GPU layer maps, comparison verdicts, stack composition and simulation evidence.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("ATLAS_LOG_LEVEL", "WARNING")},
}
