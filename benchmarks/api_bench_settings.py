"""Settings of benchmarks/api_bench.py: the product's settings, DEBUG off, plus a hello-world view
(benchmarks/api_bench_urls.py) that is the ceiling the API is measured against."""

from config.settings import *  # noqa: F403

DEBUG = False
ROOT_URLCONF = "benchmarks.api_bench_urls"
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "ERROR", "handlers": []}}
