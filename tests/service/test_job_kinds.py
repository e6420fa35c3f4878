"""The job kinds' table (`service.jobs._kinds`): every kind names a function that exists and takes
its request, imported only when asked for; the request models are the ones the API documents."""

from __future__ import annotations

import inspect

from itemsmith.registry import LazyTarget
from itemsmith.service.jobs import JOB_KINDS
from itemsmith.service.jobs._schemas import JobKind

EXPECTED = {"author", "recheck", "reverify", "evaluate", "calibrate", "release", "export", "verify", "import", "audit"}


def test_every_kind_of_the_job_schema_is_registered_once() -> None:
    assert set(JOB_KINDS) == EXPECTED == set(JobKind.__args__)  # type: ignore[attr-defined]


def test_every_kind_resolves_to_a_function_of_its_request_and_context() -> None:
    for name, spec in JOB_KINDS.items():
        assert isinstance(spec.run, LazyTarget), name
        function = spec.function()
        parameters = list(inspect.signature(function).parameters)
        assert parameters == ["request", "context"], (name, parameters)
        hints = inspect.get_annotations(function)
        assert hints["request"] == spec.request_model.__name__, name  # postponed annotations: the model's name


def test_a_function_given_directly_is_used_as_it_is() -> None:
    from itemsmith.service.jobs._kinds import JobKindSpec

    def run(request: object, context: object) -> dict[str, object]:
        return {"ran": True}

    spec = JobKindSpec("stand-in", JOB_KINDS["verify"].request_model, run)
    assert spec.function() is run
