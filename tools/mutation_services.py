"""mutmut 3 for the Django services: `make mutation-services` (docs/testing.md).

`[tool.mutmut]` in pyproject.toml serves the pure modules, whose tests run without Django
(`-p no:django`) and fast. The services' tests need Django and PostgreSQL, so this script runs
mutmut's own command line (`run`, `results`, `show`, ...) with that configuration and these
fields replaced:

- only_mutate: the service modules below (or MUTATION_SERVICES, space-separated paths);
- the test selection: tests/review, tests/api, tests/catalog, tests/evidence (or MUTATION_TESTS);
- every pytest run: `--reuse-db`, `-m "not worker and not browser"` (no broker, no browser) and
  `--ds tests.mutation_settings` (the MD5 password hasher tests/api already uses: PBKDF2 at full
  strength is most of a review test's time, and every mutant runs the tests again);
- one mutmut child: two would share the one test database.

The database is MUTATION_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/mut, so the
tests use `test_mut`); DATABASE_URL is ignored, so a run never touches another test database.

    .venv/bin/python tools/mutation_services.py run 'placement.review.services.*'
    .venv/bin/python tools/mutation_services.py results
    .venv/bin/python tools/mutation_services.py show <mutant-name>
    .venv/bin/python tools/mutation_report.py --services
"""

from __future__ import annotations

import dataclasses
import os
import sys

SERVICES = [
    "placement/review/services.py",
    "placement/access/services.py",
    "placement/access/permissions.py",
    "placement/catalog/services/catalog.py",
    "placement/evidence/services/runs.py",
]
TESTS = ["tests/review", "tests/api", "tests/catalog", "tests/evidence"]
DATABASE_URL = "postgres://postgres@127.0.0.1:5432/mut"
PYTEST_ARGS = ["--ds=tests.mutation_settings", "--reuse-db", "-m", "not worker and not browser"]


def configure() -> None:
    from mutmut import configuration

    base = configuration.config()  # pyproject.toml's [tool.mutmut]: paths, also_copy, isolation
    services = os.environ.get("MUTATION_SERVICES", "").split() or SERVICES
    tests = os.environ.get("MUTATION_TESTS", "").split() or TESTS
    configuration._config = dataclasses.replace(
        base,
        only_mutate=services,
        do_not_mutate=[],
        pytest_add_cli_args_test_selection=tests,
        pytest_add_cli_args=[*base.pytest_add_cli_args, *PYTEST_ARGS],
    )
    os.environ["DATABASE_URL"] = os.environ.get("MUTATION_DATABASE_URL", DATABASE_URL)


def main(argv: list[str]) -> None:
    if argv[:1] == ["run"]:
        given = [a.split("=", 1)[1] for a in argv if a.startswith("--max-children=")]
        given += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--max-children"]
        if any(n != "1" for n in given):
            sys.exit("one child only: two would share the one test database")
        if not given:
            argv = ["run", "--max-children", "1", *argv[1:]]
    configure()
    from mutmut.__main__ import cli

    cli(argv, prog_name="mutation_services")


if __name__ == "__main__":
    main(sys.argv[1:])
