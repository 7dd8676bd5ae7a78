"""Schemathesis against the live schema, in-process (WSGI), authenticated as a reviewer whose
token may write: no input gives a 5xx, and every response (status, content type, headers and
body, 4xx included) is the one the schema documents. OPTIONS, which the schema does not list, is
sent to every generated path too.

Nothing is excluded. POST /api/v1/simulations/ is fuzzed too: the test runs inside the test
transaction, which never commits, so a run it manages to create is never sent to a worker
(simulations are queued on commit)."""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
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

from tests.api.conftest import token_client
from tests.conftest import make_user

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


@pytest.fixture
def fuzz_token(db) -> str:
    user = make_user("fuzz-reviewer", "reviewer")
    client = token_client(user, can_write=True)
    return client._credentials["HTTP_AUTHORIZATION"].split()[1]


@pytest.fixture
def api_schema(db):
    # Like Django's test client: a finished request must not close the connection that holds
    # the test transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


# per operation and generation mode; ATLAS_FUZZ_EXAMPLES=200 for a deeper run by hand
MAX_EXAMPLES = int(os.environ.get("ATLAS_FUZZ_EXAMPLES", "15"))


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_no_input_gives_a_5xx_or_a_response_outside_the_schema(api_schema, fuzz_token, mode):
    """One Hypothesis run per operation (schemathesis' `@schema.parametrize()` with a lazy
    fixture schema does not run under pytest 9, so the operations are iterated here); every
    failing operation is reported, not only the first."""
    failures: list[str] = []
    operations = 0
    for result in api_schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            # identity: the in-process WSGI transport does not undo GZipMiddleware's encoding
            # (an HTTP client does); tests/test_page_cache.py checks the compressed answers.
            headers = {"Authorization": f"Token {fuzz_token}", "Accept-Encoding": "identity"}
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            check()
        except Unsatisfiable:
            # Nothing to negate: the operation takes no input that the schema constrains (GET
            # /api/v1/, a string path slug); the valid-input run covers it.
            assert mode == GenerationMode.NEGATIVE, operation.label
        except (Exception, BaseExceptionGroup) as exc:  # collect, so one run names every failing operation
            failures.append(f"{operation.label}:\n{exc}")
    assert operations >= 25
    assert not failures, "\n\n".join(failures)


def test_options_on_every_path_gives_no_5xx_and_a_json_body(api_schema, fuzz_token):
    """The schema lists no OPTIONS operations, so the generated paths of every operation (path
    parameters included) are asked OPTIONS directly."""
    from django.test import Client

    client = Client(raise_request_exception=False)
    failures: list[str] = []
    for result in api_schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
        @settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            response = client.options(case.formatted_path, HTTP_AUTHORIZATION=f"Token {fuzz_token}")
            assert response.status_code < 500, (case.formatted_path, response.status_code)
            assert response["Content-Type"].startswith("application/json"), case.formatted_path
            response.json()

        try:
            check()
        except (Exception, BaseExceptionGroup) as exc:
            failures.append(f"OPTIONS {operation.label}:\n{exc}")
    assert not failures, "\n\n".join(failures)
