"""Schemathesis against the app's OpenAPI schema: generated requests, valid and invalid, to every
operation, with a valid API key and a seeded bank, never get a server error, and get what the
description says.

The operations are driven one by one with each operation's Hypothesis strategy (schemathesis'
pytest fixture loader does not run under this pytest).
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES_PER_OPERATION_AND_MODE = 10


def test_no_operation_answers_with_a_server_error(app, api_key, seeded) -> None:
    """``seeded`` fills the database from id 1 up, ids the generator tries often, so generated
    requests also reach real banks, templates and (once created) releases."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 16
    failures: list[str] = []
    statuses: dict[int, int] = {}
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES_PER_OPERATION_AND_MODE, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case) -> None:
                response = case.call_and_validate(headers={"X-API-Key": api_key}, checks=[not_a_server_error])
                # negative cases may blank the key itself (the only security scheme): counted as -status
                keyed = response.request.headers.get("x-api-key") == api_key
                code = response.status_code if keyed else -response.status_code
                statuses[code] = statuses.get(code, 0) + 1

            try:
                run()
            except Unsatisfiable:  # the operation has no input that can be made invalid
                continue
            except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)
    print("responses by status:", dict(sorted(statuses.items())))
    assert sum(n for code, n in statuses.items() if 0 < code < 300) > 0 and 401 not in statuses
    assert not [code for code in statuses if -300 < code < 0], "a request without the key succeeded"


# what a JSON schema cannot say: a handler must load in the sandbox, a template's source must parse and
# define question(), the import's column map has its own grammar (FIELD=COLUMN,...); the server refuses
# such requests with a 422 that says why, although they fit the description
REFUSED_FOR_THEIR_CONTENT = {"POST /banks", "POST /templates/{version_id}/edit", "POST /banks/imports",
                             "POST /banks/{bank_id}/imports"}
CONFORMANCE = [status_code_conformance, content_type_conformance, response_schema_conformance,
               response_headers_conformance, negative_data_rejection, positive_data_acceptance]


def test_the_server_does_what_its_description_says(app, api_key, seeded) -> None:
    """Every operation, valid and invalid requests: each status is documented, each response has its
    documented type and schema, an invalid request is refused and a valid one is not (but for the
    content the description cannot state, `REFUSED_FOR_THEIR_CONTENT`)."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    for operation in [result.ok() for result in schema.get_all_operations()]:
        checks = [check for check in CONFORMANCE if not (check is positive_data_acceptance
                                                         and operation.label in REFUSED_FOR_THEIR_CONTENT)]
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES_PER_OPERATION_AND_MODE, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case) -> None:
                case.call_and_validate(headers={"X-API-Key": api_key}, checks=checks)  # noqa: B023 - run here, now

            try:
                run()
            except Unsatisfiable:
                continue
            except Exception as exc:  # noqa: BLE001 - collect every operation's failure, report them together
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)
