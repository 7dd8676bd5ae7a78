#!/usr/bin/env python
"""Schemathesis against a real server (issue 37): at least --cases generated requests, every one
checked, over HTTP to gunicorn, authenticated with a reviewer's token that may write.
tests/api/test_fuzz.py runs the same checks in-process on every `make test`, with fewer cases.

    tools/test_services.sh run -- .venv/bin/python benchmarks/api_fuzz.py [--cases 10000] [--seed 37]

(tools/test_services.sh starts a private PostgreSQL and Redis and exports their URLs; BENCH_PG and
BENCH_REDIS name others.) The database `atlas_fuzz` is created afresh with the full catalog, a
reviewer `fuzz` (also an admin, so webhooks and token grants get past their permission check) with
a token granted writing, an architect `arch` whose proposals and decisions the reviewer may accept,
and saved stacks, decisions, proposals, a webhook and an evaluation made through the API so that
paths with ids name real ones. gunicorn serves it (2 sync workers, production's settings with the
X-Forwarded-Proto header its TLS proxy sets, Redis as broker and cache; no Celery worker, so runs
stay queued). For every operation of /api/schema/,
valid and invalid inputs are generated (schemathesis' positive and negative modes; half of the
valid ones carry the catalog's real slugs, profiles, scenario names and the seeded objects' ids, see
`Realistic`), in seeded rounds until --cases were sent, and each response is checked:

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
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.api_bench import PYTHON, bench_pg, free_port, run  # noqa: E402

DB_NAME = "atlas_fuzz"
# what the TLS proxy production requires adds to every request (settings_production redirects plain http)
PROXY = {"X-Forwarded-Proto": "https"}
# what a POST to each collection makes (the id of its answer)
KINDS = (("/api/v1/stacks/evaluate/", "sweep"), ("/api/v1/stacks/", "stack"), ("/api/v1/decisions/", "decision"),
         ("/api/v1/projects/", "revision"), ("/api/v1/webhooks/", "webhook"), ("/api/v1/simulations/", "run"))
USERNAME = "fuzz"
CHECK_NAMES = ("not_a_server_error", "response_schema_conformance", "status_code_conformance",
               "content_type_conformance", "response_headers_conformance", "negative_data_rejection")


def server_env() -> dict:
    env = {**os.environ, "DATABASE_URL": f"{bench_pg()}/{DB_NAME}", "DJANGO_SETTINGS_MODULE": "benchmarks.api_fuzz_settings",
           "DJANGO_DEBUG": "0", "PYTHONPATH": str(ROOT), "DJANGO_SECRET_KEY": secrets.token_urlsafe(64)}
    redis = os.environ.get("BENCH_REDIS") or os.environ.get("ATLAS_TEST_BROKER_URL", "").rsplit("/", 1)[0]
    env.pop("ATLAS_CACHE_URL", None)
    if redis:
        env["CELERY_BROKER_URL"] = f"{redis}/13"
        env["ATLAS_CACHE_URL"] = f"{redis}/12"
    else:
        env.pop("CELERY_BROKER_URL", None)
    return env


def prepare_database(env: dict) -> tuple[str, str]:
    """A fresh database with the catalog, the fuzzing reviewer and an architect whose proposals and
    decisions it may review; returns their tokens."""
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
        "arch = User.objects.create_user('arch', password='arch-password-37')\n"
        "arch.groups.add(Group.objects.get(name='architect'))\n"
        "ApiAccess.objects.create(user=arch, token_can_write=True)\n"
        "print(Token.objects.create(user=user).key, Token.objects.create(user=arch).key)\n"
    )
    out = subprocess.run([PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    fuzzer, architect = out.split()[-2:]
    return fuzzer, architect


def wait_for(url: str, timeout: float = 60.0) -> None:
    """Until the server answers (with the proxy's header: production redirects plain http)."""
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, headers=PROXY, timeout=5, allow_redirects=False)
            return
        except requests.ConnectionError:
            time.sleep(0.3)
    raise SystemExit(f"gunicorn did not answer {url}")


def seed_objects(base: str, token: str, architect: str) -> dict[str, list[int]]:
    """Three of each object a path names by id, made as clients would make them (the architect's
    proposals and decisions are the ones the fuzzing reviewer may accept or reject); their ids by kind."""
    import requests

    def proposal(slug: str) -> dict:
        document = requests.get(f"{base}/api/v1/projects/{slug}/", headers={"Authorization": f"Token {token}", **PROXY},
                                timeout=60).json()
        for field in ("stale", "version", "accepted", "updated_at", "url", "revisions_url"):  # the server's fields
            document.pop(field, None)
        return {**document, "placement": {**document["placement"], "promise": f"{slug}, sharper."}, "reason": "fuzz seed"}

    scenario = requests.get(f"{base}/api/v1/scenarios/", headers={"Authorization": f"Token {token}", **PROXY},
                            timeout=60).json()[0]["name"]
    ids: dict[str, list[int]] = {}
    for who, path, body in (
        (token, "/api/v1/stacks/", {"request": {"profile": "training"}, "rank": 1}),
        (token, "/api/v1/stacks/", {"request": {"profile": "mixed"}, "rank": 1}),
        (token, "/api/v1/stacks/", {"request": {"profile": "online_inference"}, "rank": 2}),
        (architect, "/api/v1/decisions/", {"title": "Training stack", "options": [1, 2], "reason": "fuzz seed"}),
        (architect, "/api/v1/decisions/", {"title": "Mixed stack", "options": [2], "reason": "fuzz seed"}),
        (architect, "/api/v1/decisions/", {"title": "Serving stack", "options": [3], "reason": "fuzz seed"}),
        (token, "/api/v1/webhooks/", {"name": "seed", "url": "https://93.184.215.14/hook", "events": ["catalog.changed"]}),
        (architect, "/api/v1/projects/kueue/revisions/", proposal("kueue")),
        (architect, "/api/v1/projects/volcano/revisions/", proposal("volcano")),
        (architect, "/api/v1/projects/hami/revisions/", proposal("hami")),
        (token, "/api/v1/webhooks/", {"name": "seed 2", "url": "https://93.184.215.34/hook", "events": ["decision.accepted"]}),
        (token, "/api/v1/stacks/evaluate/", {"request": {"profile": "training"}, "top": 1}),
        (token, "/api/v1/stacks/evaluate/", {"request": {"profile": "mixed"}, "top": 2}),
        (token, "/api/v1/simulations/", {"scenario_name": scenario, "stack": 1}),
    ):
        response = requests.post(base + path, json=body, headers={"Authorization": f"Token {who}", **PROXY}, timeout=60)
        if response.status_code >= 300:
            print(f"seed {path}: {response.status_code} {response.text[:200]}", file=sys.stderr)
            continue
        kind = next(kind for prefix, kind in KINDS if path.startswith(prefix))
        ids.setdefault(kind, []).append(response.json()["id"])
        if kind == "sweep":
            ids.setdefault("run", []).extend(run["id"] for run in response.json().get("runs", []) if "id" in run)
    return ids


class Tally:
    def __init__(self):
        self.cases = 0
        self.statuses: collections.Counter = collections.Counter()
        self.by_operation: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
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


class Realistic:
    """The catalog's own names put into a generated case. Valid-by-schema input is mostly refused
    for meaning (an unknown project, no profile, an id that does not exist), so half of the valid
    cases get real project, capability and map slugs, profiles, scenario names, GPU models and the
    seeded ids where the schema has a string or an integer: success paths are checked too."""

    def __init__(self, base: str, session, ids: dict[str, list[int]]):
        def read(path: str, key: str) -> list[str]:
            body = session.get(base + path, timeout=60).json()
            return sorted({row[key] for row in (body["results"] if isinstance(body, dict) else body)})

        self.values = {
            "project": read("/api/v1/projects/?limit=500", "slug"),
            "capability": read("/api/v1/capabilities/?limit=500", "slug"),
            "map": read("/api/v1/maps/?limit=500", "slug"),
            "profile": read("/api/v1/profiles/", "profile"),
            "scenario": read("/api/v1/scenarios/", "name"),
            "gpu": ["A100-SXM4-80GB", "H100-SXM5-80GB", "A100-PCIE-40GB", "L40S-PCIE-48GB"],
            **{kind: found or [1] for kind, found in ids.items()},
        }
        # field or parameter name -> which values it takes
        self.names = {"slug": "project", "slugs": "project", "with": "project", "project": "project", "exclude": "project",
                      "require": "project", "capability": "capability", "map": "map", "profile": "profile",
                      "scenario_name": "scenario", "gpu_model": "gpu", "stack": "stack", "run": "run",
                      "options": "stack", "evidence_sweeps": "sweep"}
        # an {id} in a path: the seeded objects of that collection
        self.ids = (("/stacks/evaluate/", "sweep"), ("/stacks/", "stack"), ("/decisions/", "decision"),
                    ("/revisions/", "revision"), ("/simulations/", "run"), ("/webhooks/", "webhook"))
        self.special = {"gpus_per_replica": [0.25, 0.5, 1, 2, 4, 8], "url": ["https://93.184.215.14/hook"],
                        "events": [["catalog.changed"], ["decision.accepted", "catalog.changed"]], "username": ["rita"],
                        "comment": ["Reads right.", "Say which release changed this."]}

    def kind(self, path: str, name: str) -> str | None:
        if name == "slug":  # /projects/{slug}/, /capabilities/{slug}/, /maps/{slug}/
            return "capability" if "/capabilities/" in path else "map" if "/maps/" in path else "project"
        if name == "id":
            return next((kind for prefix, kind in self.ids if prefix in path), None)
        return self.names.get(name)

    def value(self, kind: str, current, rnd):
        pool = self.values[kind]
        if isinstance(current, list):
            return rnd.sample(pool, min(len(pool), max(1, len(current))))
        return rnd.choice(pool)

    def body(self, path: str, value, rnd):
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if key in self.special and rnd.random() < 0.7:
                    out[key] = rnd.choice(self.special[key])
                elif (kind := self.kind(path, key)) and rnd.random() < 0.8:
                    out[key] = self.value(kind, item, rnd)
                else:
                    out[key] = self.body(path, item, rnd)
            return out
        if isinstance(value, list):
            return [self.body(path, item, rnd) for item in value]
        return value.replace("\x00", "") if isinstance(value, str) else value

    def __call__(self, operation, case, rnd):
        path = operation.path
        for name in list(case.path_parameters or {}):
            if kind := self.kind(path, name):
                case.path_parameters[name] = self.value(kind, None, rnd)
        query = dict(case.query or {})
        for parameter in operation.query:
            kind = self.names.get(parameter.name)
            if kind and rnd.random() < 0.7:
                query[parameter.name] = self.value(kind, None, rnd)
        case.query = query or case.query
        if isinstance(case.body, (dict, list)):
            case.body = self.body(path, case.body, rnd)
        if isinstance(case.body, dict) and path.endswith(("/stacks/", "/compose/", "/evaluate/")) and rnd.random() < 0.7:
            # a stack request names a profile or workload classes: most generated ones name neither
            request = case.body if path.endswith("/compose/") else case.body.setdefault("request", {})
            if isinstance(request, dict) and not request.get("workloads"):
                request["profile"] = self.value("profile", None, rnd)
            for key, most in (("rank", 5), ("top", 3)):
                if key in case.body and rnd.random() < 0.7:
                    case.body[key] = rnd.randint(1, most)
        return case


def fuzz(base: str, token: str, ids: dict[str, list[int]], cases: int, seed: int, tally: Tally, deadline: float) -> None:
    import requests
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
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
    schema = schemathesis.openapi.from_dict(requests.get(f"{base}/api/schema/?format=json", headers=PROXY, timeout=60).json())
    operations = [result.ok() for result in schema.get_all_operations()]
    assert_checks_are_live(operations[0], checks)
    session = requests.Session()
    headers = {"Authorization": f"Token {token}", **PROXY}
    session.headers.update(headers)
    realistic = Realistic(base, session, ids)
    modes = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)

    def strategy(operation, mode):
        generated = operation.as_strategy(generation_mode=mode)
        if mode != GenerationMode.POSITIVE:
            return generated
        return st.one_of(generated, st.tuples(generated, st.randoms(use_true_random=False)).map(
            lambda pair, operation=operation: realistic(operation, *pair)))
    round_ = 0
    while tally.cases < cases and time.monotonic() < deadline:
        per_run = max(10, -(-(cases - tally.cases) * 5 // (4 * len(operations) * len(modes))))
        before = tally.cases
        for operation in operations:
            for mode in modes:

                @given(case=strategy(operation, mode))
                @settings(max_examples=per_run, deadline=None, suppress_health_check=list(HealthCheck), database=None)
                @hypothesis_seed(seed * 1000 + round_)
                def one(case):
                    response = case.call(base_url=base, session=session, headers=headers, timeout=60)
                    tally.cases += 1
                    tally.statuses[response.status_code] += 1
                    tally.by_operation[operation.label][response.status_code] += 1
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
    token, architect = prepare_database(env)
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
            ids = seed_objects(base, token, architect)
            print(f"schemathesis against gunicorn ({args.workers} sync workers) at {base}, token of reviewer "
                  f"{USERNAME!r} (writes granted), at least {args.cases:,} cases, seed {args.seed}")
            fuzz(base, token, ids, args.cases, args.seed, tally, started + args.minutes * 60)
        finally:
            server.terminate()
            server.wait(timeout=30)
    minutes = (time.monotonic() - started) / 60
    print(f"\n{tally.cases:,} cases in {minutes:.1f} min; statuses: "
          + ", ".join(f"{s}: {n:,}" for s, n in sorted(tally.statuses.items())))
    print(f"5xx responses: {tally.server_errors}")
    never = [op for op, seen in tally.by_operation.items() if not any(200 <= status < 300 for status in seen)]
    print(f"operations answered 2xx at least once: {len(tally.by_operation) - len(never)} of {len(tally.by_operation)}"
          + (f" (never: {', '.join(never)})" if never else ""))
    for name in CHECK_NAMES:
        print(f"  {name:<30} failed {tally.failed[name]:>6}")
    for failure in tally.failures.values():
        print(f"\n{failure['operation']}: {failure['check']} (x{failure.get('count', 1)}), status {failure['status']}\n"
              f"  {failure['message'][:600]}\n  {failure['curl'][:600]}")
    Path(args.report).write_text(json.dumps({"cases": tally.cases, "statuses": dict(tally.statuses),
                                             "server_errors": tally.server_errors, "failed": dict(tally.failed),
                                             "by_operation": {op: dict(seen) for op, seen in tally.by_operation.items()},
                                             "failures": list(tally.failures.values())}, indent=1, default=str))
    print(f"\nreport: {args.report}; server log: {log}")
    bad = tally.server_errors or tally.failed["not_a_server_error"] or tally.failed["response_schema_conformance"]
    return 1 if bad or tally.cases < args.cases else 0


if __name__ == "__main__":
    sys.exit(main())
