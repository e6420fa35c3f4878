"""The model factory: one SPEC@RANK rule, one identity rule, judges and students built the same
way for every entry point, the Anthropic cache breakpoint, strict (evaluation) binding."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from itemsmith.agents.errors import ProviderCallError
from itemsmith.agents.llm.factory import CallLog, StudentModel, _cache_breakpoint, build_judges, build_students
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.items.schema import Item
from itemsmith.verification.calls import ModelCallFailed
from itemsmith.verification.judges import CRITERION_MARKER, PanelConfig, judge_prompt
from itemsmith.verification.samples import TemplateSample
from itemsmith.verification.students import StudentConfig

NO_WAIT = RetryPolicy(max_retries=1, initial_s=0, max_s=0)


def test_student_specs_parse_and_bad_ones_are_clear() -> None:
    spec = StudentSpec.model_validate("openai_compatible:qwen@http://127.0.0.1:8000/v1@3")
    assert (str(spec.spec), spec.rank, spec.resolved_mode) == ("openai_compatible:qwen@http://127.0.0.1:8000/v1", 3,
                                                               "chat")
    assert spec.name == "openai_compatible:qwen@http://127.0.0.1:8000/v1"  # the identity: the canonical spec
    assert StudentSpec.model_validate("local:smollm2-135m@1").resolved_mode == "loglik"
    with pytest.raises(ValueError, match="not SPEC@RANK"):
        StudentSpec.model_validate("local:smollm2-135m")
    with pytest.raises(ValueError, match="not SPEC@RANK"):
        StudentSpec.model_validate("local:smollm2-135m@one")


def test_identity_is_the_canonical_spec_for_judges_and_students(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Score: 7"]))
    settings = AgentSettings(scripted_dir=tmp_path)
    assert str(ModelSpec.parse(" scripted:replies.json ")) == "scripted:replies.json"
    judges = build_judges([ModelSpec.parse(" scripted:replies.json")], settings=settings)
    students = build_students([StudentSpec.model_validate("scripted:replies.json@2")], settings=settings)
    assert judges[0].config.name == students[0].config.name == "scripted:replies.json"
    assert judges[0].config.form == "reasoning" and students[0].config.rank == 2
    with pytest.raises(Exception, match="distinct"):
        build_judges([ModelSpec.parse("scripted:replies.json"), ModelSpec.parse("scripted:replies.json ")],
                     settings=settings)


def _sample() -> TemplateSample:
    item = Item(question="Does it rise?", options=["yes", "no"], answer_index=0, kind="tf",
                series=[{"name": "v", "values": [1.0, 2.0, 3.0]}])
    return TemplateSample(template_id="t", items=[item], task="trends", dataset="levels")


def test_anthropic_judge_prompts_mark_the_shared_items_part_for_caching() -> None:
    messages = judge_prompt(_sample(), "relevance", PanelConfig())
    marked = _cache_breakpoint(messages)
    blocks = marked[-1].content
    assert isinstance(blocks, list) and blocks[0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in blocks[1] and blocks[1]["text"].startswith(CRITERION_MARKER)
    assert blocks[0]["text"] + blocks[1]["text"] == messages[-1].content  # nothing lost or added
    assert "### Question 1" in blocks[0]["text"]  # the items are in the cached part
    other = _cache_breakpoint(judge_prompt(_sample(), "solvability", PanelConfig()))
    assert other[-1].content[0]["text"] == blocks[0]["text"]  # the same prefix for every criterion
    plain = [HumanMessage("no criterion here")]
    assert _cache_breakpoint(plain) == plain


def test_scripted_failing_model_is_missing_data_in_review_and_an_error_in_evaluation() -> None:
    broken = ModelHandle(ScriptedChatModel.from_source([{"error": 401}]), "scripted", "broken", 5.0)
    student = StudentModel(StudentConfig(name="scripted:broken", rank=0), broken)
    log = CallLog()
    with pytest.raises(ModelCallFailed) as failed:  # never a text the stage would parse as an answer
        asyncio.run(student.bind(log, NO_WAIT).model.ainvoke([HumanMessage("Question")]))
    assert failed.value.outcome == "failed" and "HTTP 401" in str(failed.value) and len(log.errors) == 1
    assert log.ledger.totals().failed_calls == 1 and broken.model.calls == 1  # a permanent 401 is asked once
    strict = student.bind(CallLog(), NO_WAIT, strict=True)
    with pytest.raises(ProviderCallError):
        asyncio.run(strict.model.ainvoke([HumanMessage("Question")]))
