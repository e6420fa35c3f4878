"""The authoring request is defined once (agents.config) and every entry point is built from it."""

from __future__ import annotations

import inspect

import pytest
from pydantic import ValidationError

from itemsmith.agents.config import AuthorConfig, AuthoringRequest, RunSettings
from itemsmith.api.models import BankRunSettings
from itemsmith.cli.author import author
from itemsmith.service.jobs import AuthorJobRequest

# the CLI's name of a field where a repeatable option is singular
CLI_NAMES = {"judges": "judge", "students": "student"}


def test_every_entry_point_is_built_from_the_one_request() -> None:
    assert issubclass(AuthorConfig, AuthoringRequest) and issubclass(AuthorJobRequest, AuthoringRequest)
    assert issubclass(BankRunSettings, RunSettings)
    checked_by_the_server = set(BankRunSettings.__annotations__)  # model specs, against the server's policy
    for model in (AuthorConfig, AuthorJobRequest, BankRunSettings):
        for name, field in RunSettings.model_fields.items():
            if not (model is BankRunSettings and name in checked_by_the_server):
                assert repr(model.model_fields[name]) == repr(field), (model.__name__, name)


def test_the_command_line_maps_onto_the_request_one_to_one() -> None:
    options = set(inspect.signature(author).parameters)
    for name in AuthoringRequest.model_fields:
        assert CLI_NAMES.get(name, name) in options, f"author has no option for {name}"


def test_the_bounds_are_the_requests_everywhere() -> None:
    for model in (AuthorConfig, AuthorJobRequest, BankRunSettings):
        with pytest.raises(ValidationError, match="rounds"):
            model.model_validate({"handler": "weather", "task": "a task", "bank_id": 1, "rounds": 21})
    request = AuthorJobRequest(bank_id=1, handler="weather", task="a task", students=["local:smollm2-135m@1"])
    config = AuthorConfig(**request.model_dump(exclude={"bank_id"}))
    assert config.students == request.students and config.seed is None and config.rounds == 3
