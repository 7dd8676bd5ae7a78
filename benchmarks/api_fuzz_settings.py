"""Settings of benchmarks/api_fuzz.py: production's (config.settings_production: DEBUG off, JSON
renderer only, no anonymous reads, HTTPS behind a proxy that sets X-Forwarded-Proto, which the
fuzzer sends), and every server error's traceback on stderr (the server log the fuzzer names)."""

from config.settings_production import *  # noqa: F403

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False}},
    "root": {"level": "WARNING", "handlers": ["stderr"]},
}
