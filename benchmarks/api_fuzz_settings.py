"""Settings of benchmarks/api_fuzz.py: the product's settings with DEBUG off, as production runs
them, and every server error's traceback on stderr (the server log the fuzzer names)."""

from config.settings import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"handlers": ["stderr"], "level": "ERROR", "propagate": False}},
    "root": {"level": "WARNING", "handlers": ["stderr"]},
}
