"""Model specs are parsed once, where they enter (agents.llm.spec), held parsed and written as their text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig, RunSettings
from itemsmith.agents.errors import SettingsError
from itemsmith.agents.llm.spec import ModelSpec, ModelSpecField, StudentSpec
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.service.jobs import AuthorJobRequest

from ..conftest import GOOD, fenced, plan_reply


def counted_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts `ModelSpec.parse` is called with from now on."""
    calls: list[str] = []
    parse = ModelSpec.parse.__func__  # type: ignore[attr-defined]

    def counting(cls: type[ModelSpec], spec: str) -> ModelSpec:
        calls.append(spec)
        return parse(cls, spec)

    monkeypatch.setattr(ModelSpec, "parse", classmethod(counting))
    return calls


def test_scripted_authoring_run_parses_each_spec_of_its_request_once(monkeypatch, pool, handler_file,
                                                                     tmp_path: Path) -> None:
    scripts = {"gen": [fenced(GOOD)], "plan": [plan_reply(["Mean level"])], "solver": ["no program"],
               "judge": ["Clear and answerable from the series.\nScore: 9"], "student": ["A"]}
    for name, replies in scripts.items():
        (tmp_path / f"{name}.json").write_text(json.dumps({"replies": replies}))
    settings = AgentSettings()
    parsed = counted_parses(monkeypatch)
    config = AuthorConfig.model_validate({
        "handler": str(handler_file), "task": "water levels", "templates": 1, "slots": 1, "rounds": 1,
        "generator": f"scripted:{tmp_path / 'gen.json'}", "planner": f"scripted:{tmp_path / 'plan.json'}",
        "solver": f"scripted:{tmp_path / 'solver.json'}", "judges": [f"scripted:{tmp_path / 'judge.json'}"],
        "students": [f"scripted:{tmp_path / 'student.json'}@1"], "out_dir": str(tmp_path / "out"),
        "checkpoint": "memory", "run_id": "parsed-once"})
    assert len(parsed) == 5  # the generator, the planner, the solver, the judge, the student
    report = asyncio.run(author(config, settings=settings, pool=pool))
    assert report.slots[0].status in ("accepted", "discarded"), report.slots[0].error  # its models ran
    assert len(parsed) == 5  # building, running and reporting parse nothing again
    stages = json.loads((tmp_path / "out" / "parsed-once" / "report.json").read_text())["stages"]
    assert {s["name"]: s["models"] for s in stages}["students"] == [f"scripted:{tmp_path / 'student.json'}@1"]


def test_a_job_request_reads_and_writes_its_specs_as_the_text_it_was_given() -> None:
    stored = {"bank_id": 3, "handler": "weather", "task": "water levels", "generator": "openai_compatible:qwen@vllm",
              "planner": "openai_compatible:qwen@http://localhost:8000/v1", "judges": ["openai:gpt-4o", "local:x"],
              "students": [{"spec": "openai:gpt-4o-mini", "rank": 1, "mode": "auto"}]}
    request = AuthorJobRequest.model_validate(stored)  # a job row of an older itemsmith: specs as strings
    assert request.generator == ModelSpec(provider="openai_compatible", model="qwen", endpoint="vllm")
    assert request.planner is not None and request.planner.base_url == "http://localhost:8000/v1"
    written = request.model_dump(mode="json")
    assert {name: written[name] for name in stored} == stored
    assert request.model_dump()["judges"] == stored["judges"]  # python mode writes the text too
    assert AuthorJobRequest.model_validate_json(request.model_dump_json()) == request
    as_text = AuthorJobRequest.model_validate({**stored, "students": ["openai:gpt-4o-mini@1"]})
    assert as_text.students == request.students and str(as_text.students[0]) == "openai:gpt-4o-mini@1"


def test_the_schema_of_a_spec_is_a_string() -> None:
    generator = RunSettings.model_json_schema()["properties"]["generator"]
    assert {"type": "string", "minLength": 3, "maxLength": 500} in [
        {k: v for k, v in option.items() if k != "description"} for option in generator["anyOf"]]
    student = StudentSpec.model_json_schema()["properties"]["spec"]
    assert student["type"] == "string"


class _Holder(BaseModel):
    spec: ModelSpecField


@pytest.mark.parametrize(("text", "error"), [
    ("gpt-4o", "is not 'provider:model'"),
    ("openai_compatible:qwen", "use openai_compatible:<model>@<endpoint name>"),
    ("openai_compatible:qwen@http://user:pw@host/v1", "must not carry credentials"),
    ("openai:" + "x" * 500, "at most 500 characters"),
])
def test_a_malformed_spec_is_refused_where_it_enters(text: str, error: str) -> None:
    with pytest.raises(ValidationError, match=error) as caught:
        _Holder(spec=text)
    assert "pw@" not in caught.value.errors()[0]["msg"]  # the message never echoes a credential


def test_settings_hold_parsed_specs_and_name_a_malformed_variable(monkeypatch) -> None:
    monkeypatch.setenv("ITEMSMITH_GENERATOR", "anthropic:claude-haiku-4-5")
    monkeypatch.setenv("ITEMSMITH_DEFAULT_STUDENTS", '["local:smollm2-135m@1"]')
    settings = get_settings()
    assert settings.default_generator() == ModelSpec(provider="anthropic", model="claude-haiku-4-5")
    assert settings.default_students == [StudentSpec(spec=ModelSpec(provider="local", model="smollm2-135m"), rank=1)]
    monkeypatch.setenv("ITEMSMITH_GENERATOR", "claude")
    with pytest.raises(SettingsError, match="ITEMSMITH_GENERATOR: model spec 'claude' is not 'provider:model'"):
        get_settings()
