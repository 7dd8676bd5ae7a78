#!/usr/bin/env python
"""Schemathesis against a real server (issue 37): at least --cases generated requests, every one
checked, over HTTP to gunicorn, authenticated with a reviewer's token that may write.
tests/api/test_fuzz.py runs the same checks in-process on every `make test`, with fewer cases.

    tools/test_services.sh run -- .venv/bin/python benchmarks/api_fuzz.py [--cases 10000] [--seed 37]

(tools/test_services.sh starts a private PostgreSQL and Redis and exports their URLs; BENCH_PG and
BENCH_REDIS name others.) The database `atlas_fuzz` is created afresh with the full catalog, a
reviewer `fuzz` with a token granted writing, and a few saved stacks, a decision, a proposal, a
webhook and an evaluation made through the API so that ids 1 and 2 exist. gunicorn serves it
(2 sync workers, the product's settings, DEBUG off, Redis as broker and cache; no Celery worker, so
runs stay queued). The reviewer is also an admin, so the admin-only writes (webhooks, token grants)
are generated past the permission check too. For every operation of /api/schema/, valid and invalid inputs are generated
(schemathesis' positive and negative modes), in rounds with new seeds until --cases were sent, and
each response is checked:

  not_a_server_error            no 5xx
  response_schema_conformance   the body is what the schema documents for that status
  status_code_conformance       the status is one the schema documents
  content_type_conformance      the content type is the documented one
  response_headers_conformance  documented headers are present and valid
  negative_data_rejection       invalid input is not accepted with a 2xx

Prints the cases sent, the statuses seen, the count per check failed, and each distinct failure
(operation, check, the request as curl); writes them all to --report (JSON). Exit status 1 when
any 5xx or response-schema violation was found.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.api_bench import PYTHON, bench_pg, free_port, run, wait_for  # noqa: E402

DB_NAME = "atlas_fuzz"
USERNAME = "fuzz"
CHECK_NAMES = ("not_a_server_error", "response_schema_conformance", "status_code_conformance",
               "content_type_conformance", "response_headers_conformance", "negative_data_rejection")


def server_env() -> dict:
    env = {**os.environ, "DATABASE_URL": f"{bench_pg()}/{DB_NAME}", "DJANGO_SETTINGS_MODULE": "benchmarks.api_fuzz_settings",
           "DJANGO_DEBUG": "0", "PYTHONPATH": str(ROOT)}
    redis = os.environ.get("BENCH_REDIS") or os.environ.get("ATLAS_TEST_BROKER_URL", "").rsplit("/", 1)[0]
    env.pop("ATLAS_CACHE_URL", None)
    if redis:
        env["CELERY_BROKER_URL"] = f"{redis}/13"
        env["ATLAS_CACHE_URL"] = f"{redis}/12"
    else:
        env.pop("CELERY_BROKER_URL", None)
    return env


def prepare_database(env: dict) -> str:
    """A fresh database with the catalog and the fuzzing reviewer; returns the reviewer's token."""
    import psycopg

    with psycopg.connect(f"{bench_pg()}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    run([PYTHON, "manage.py", "migrate", "-v0"], env)
    run([PYTHON, "manage.py", "seed_roles"], env)
    run([PYTHON, "manage.py", "import_catalog", "fixtures/catalog"], env)
    code = (
        "from django.contrib.auth.models import Group, User\n"
        "from rest_framework.authtoken.models import Token\n"
        "from placement.access.models import ApiAccess\n"
        f"user = User.objects.create_user({USERNAME!r}, password='fuzz-password-37', is_staff=True, is_superuser=True)\n"
        "user.groups.add(Group.objects.get(name='reviewer'))\n"
        "ApiAccess.objects.create(user=user, token_can_write=True)\n"
        "User.objects.create_user('rita', password='rita-password-37').groups.add(Group.objects.get(name='reader'))\n"
        "print(Token.objects.create(user=user).key)\n"
    )
    out = subprocess.run([PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    return out.split()[-1]


def seed_objects(base: str, token: str) -> None:
    """Objects with ids 1 and 2 (the ids generated most often), made as a client would make them."""
    import requests

    session = requests.Session()
    session.headers.update({"Authorization": f"Token {token}"})
    kueue = session.get(f"{base}/api/v1/projects/kueue/").json()
    for field in ("stale", "version", "accepted", "updated_at", "url", "revisions_url"):  # the server's, not the proposer's
        kueue.pop(field, None)
    for path, body in (
        ("/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1}),
        ("/api/v1/stacks/", {"request": {"profile": "mixed"}, "rank": 1}),
        ("/api/v1/decisions/", {"title": "Training stack", "options": [1, 2], "reason": "fuzz seed"}),
        ("/api/v1/decisions/", {"title": "Mixed stack", "options": [2], "reason": "fuzz seed"}),
        ("/api/v1/webhooks/", {"name": "seed", "url": "https://93.184.215.14/hook", "events": ["catalog.changed"]}),
        ("/api/v1/projects/kueue/revisions/", {**kueue, "placement": {**kueue["placement"], "promise": "Quotas."},
                                               "reason": "fuzz seed"}),
        ("/api/v1/stacks/evaluate/", {"request": {"profile": "training"}, "top": 1}),
    ):
        response = session.post(base + path, json=body, timeout=60)
        if response.status_code >= 300:
            print(f"seed {path}: {response.status_code} {response.text[:200]}", file=sys.stderr)


class Tally:
    def __init__(self):
        self.cases = 0
        self.statuses: collections.Counter = collections.Counter()
        self.failed: collections.Counter = collections.Counter()
        self.failures: dict[tuple[str, str, str], dict] = {}  # (operation, check, first line) -> example
        self.server_errors = 0

    def record(self, operation: str, check: str, message: str, case, response) -> None:
        self.failed[check] += 1
        key = (operation, check, message.strip().splitlines()[0][:160] if message.strip() else "")
        if key not in self.failures:
            self.failures[key] = {"operation": operation, "check": check, "status": response.status_code,
                                  "message": message.strip()[:2000], "curl": case.as_curl_command(),
                                  "response": response.text[:1000]}
        else:
            self.failures[key].setdefault("count", 1)
            self.failures[key]["count"] += 1


def assert_checks_are_live(operation, checks: dict) -> None:
    """A fabricated 500 with a body outside the schema fails the two checks that matter, the way
    this script catches failures: a run that finds nothing has not silently checked nothing."""
    import datetime

    import requests

    response = requests.Response()
    response.status_code, response._content = 500, b"<h1>Server Error</h1>"
    response.headers["Content-Type"] = "text/html"
    response.url = "http://127.0.0.1/api/v1/"
    response.request = requests.Request("GET", response.url).prepare()
    response.elapsed = datetime.timedelta(0)
    for name in ("not_a_server_error", "status_code_conformance"):
        try:
            operation.Case().validate_response(response, checks=[checks[name]])
        except (Exception, BaseExceptionGroup):
            continue
        raise SystemExit(f"{name} let a fabricated 500 pass: the checks are not running")


def fuzz(base: str, token: str, cases: int, seed: int, tally: Tally, deadline: float) -> None:
    import requests
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        negative_data_rejection,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = dict(zip(CHECK_NAMES, (not_a_server_error, response_schema_conformance, status_code_conformance,
                                    content_type_conformance, response_headers_conformance, negative_data_rejection)))
    schema = schemathesis.openapi.from_url(f"{base}/api/schema/")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert_checks_are_live(operations[0], checks)
    session = requests.Session()
    headers = {"Authorization": f"Token {token}"}
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    round_ = 0
    while tally.cases < cases and time.monotonic() < deadline:
        per_run = max(10, -(-(cases - tally.cases) * 5 // (4 * len(operations) * len(modes))))
        before = tally.cases
        for operation in operations:
            for mode in modes:

                @given(case=operation.as_strategy(generation_mode=mode))
                @settings(max_examples=per_run, deadline=None, suppress_health_check=list(HealthCheck), database=None)
                @hypothesis_seed(seed * 1000 + round_)
                def one(case):
                    response = case.call(base_url=base, session=session, headers=headers, timeout=60)
                    tally.cases += 1
                    tally.statuses[response.status_code] += 1
                    tally.server_errors += response.status_code >= 500
                    for name, check in checks.items():
                        try:
                            case.validate_response(response, checks=[check], headers=headers)
                        except (Exception, BaseExceptionGroup) as exc:  # a failed check (a FailureGroup): count it, go on
                            tally.record(operation.label, name, str(exc), case, response)

                try:
                    one()
                except Unsatisfiable:
                    pass  # nothing to negate in this operation's input
        round_ += 1
        print(f"  round {round_}: {tally.cases - before:,} cases at up to {per_run} per operation and mode "
              f"({tally.cases:,} in all, {tally.server_errors} x 5xx)", flush=True)
        if tally.cases == before:
            break


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=90, help="stop generating after this long")
    parser.add_argument("--report", default=str(ROOT / "var" / "api_fuzz_report.json"))
    args = parser.parse_args()

    env = server_env()
    token = prepare_database(env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = Path(args.report).with_suffix(".server.log")
    log.parent.mkdir(parents=True, exist_ok=True)
    gunicorn = shutil.which("gunicorn", path=str(Path(PYTHON).parent)) or "gunicorn"
    with log.open("w") as server_log:
        server = subprocess.Popen([gunicorn, "config.wsgi:application", "-w", str(args.workers), "-b", f"127.0.0.1:{port}",
                                   "--worker-class", "sync", "--timeout", "30", "--log-level", "warning"],
                                  cwd=ROOT, env=env, stdout=server_log, stderr=server_log)
        tally = Tally()
        started = time.monotonic()
        try:
            wait_for(f"{base}/api/v1/")
            seed_objects(base, token)
            print(f"schemathesis against gunicorn ({args.workers} sync workers) at {base}, token of reviewer "
                  f"{USERNAME!r} (writes granted), at least {args.cases:,} cases, seed {args.seed}")
            fuzz(base, token, args.cases, args.seed, tally, started + args.minutes * 60)
        finally:
            server.terminate()
            server.wait(timeout=30)
    minutes = (time.monotonic() - started) / 60
    print(f"\n{tally.cases:,} cases in {minutes:.1f} min; statuses: "
          + ", ".join(f"{s}: {n:,}" for s, n in sorted(tally.statuses.items())))
    print(f"5xx responses: {tally.server_errors}")
    for name in CHECK_NAMES:
        print(f"  {name:<30} failed {tally.failed[name]:>6}")
    for failure in tally.failures.values():
        print(f"\n{failure['operation']}: {failure['check']} (x{failure.get('count', 1)}), status {failure['status']}\n"
              f"  {failure['message'][:600]}\n  {failure['curl'][:600]}")
    Path(args.report).write_text(json.dumps({"cases": tally.cases, "statuses": dict(tally.statuses),
                                             "server_errors": tally.server_errors, "failed": dict(tally.failed),
                                             "failures": list(tally.failures.values())}, indent=1, default=str))
    print(f"\nreport: {args.report}; server log: {log}")
    bad = tally.server_errors or tally.failed["not_a_server_error"] or tally.failed["response_schema_conformance"]
    return 1 if bad or tally.cases < args.cases else 0


if __name__ == "__main__":
    sys.exit(main())
