"""Which stages a run runs, with which models (`agents.stages.pipeline`): the defaults with local models
present or absent (the availability check is patched, no model is loaded), explicit lists, the
run header, and the judges' agreement of the run summary with one judge or several."""

from __future__ import annotations

import pytest

from itemsmith.agents.authoring.models import judge_agreement
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.errors import ProviderConfigError, SettingsError
from itemsmith.agents.llm.providers import local as local_models
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.agents.stages.pipeline import Pipeline, StageInfo, header_lines, resolve_pipeline, run_header
from itemsmith.items.schema import JudgeScore
from itemsmith.verification.judges import PanelConfig, TemplateJudgement, judgement_from_scores

LADDER = ["local:smollm2-135m@1", "local:qwen2.5-coder-0.5b@2", "local:qwen2.5-coder-1.5b@3"]


@pytest.fixture
def defaults(monkeypatch: pytest.MonkeyPatch) -> AgentSettings:
    """The built-in defaults (tests/conftest.py turns them off for every other test), no keys."""
    for name in ("ITEMSMITH_DEFAULT_JUDGES", "ITEMSMITH_DEFAULT_STUDENTS", "ITEMSMITH_REDERIVATION_ENABLED", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                 "ITEMSMITH_OPENAI_API_KEY", "ITEMSMITH_ANTHROPIC_API_KEY", "ITEMSMITH_GENERATOR", "ITEMSMITH_ADVISORY_STUDENTS"):
        monkeypatch.delenv(name, raising=False)
    return AgentSettings()


@pytest.fixture
def running(defaults: AgentSettings) -> AgentSettings:
    """The defaults, with an advisory ladder run as asked (ITEMSMITH_ADVISORY_STUDENTS=run)."""
    return defaults.model_copy(update={"advisory_students": "run"})


def installed_only(monkeypatch: pytest.MonkeyPatch, *names: str, llama: bool = True) -> None:
    monkeypatch.setattr(local_models, "installed", lambda name: name in names)
    monkeypatch.setattr(local_models, "llama_available", lambda: llama)


def config(**overrides: object) -> AuthorConfig:
    return AuthorConfig.model_validate({"handler": "weather", "task": "temperature questions", **overrides})


def stage(resolved: Pipeline, name: str) -> StageInfo:
    return next(s for s in resolved.stages if s.name == name)


def test_default_pipeline_with_every_local_model_installed(monkeypatch, running) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
    defaults = running
    resolved = resolve_pipeline(config(), defaults)
    assert list(map(str, resolved.judges)) == ["local:qwen2.5-coder-1.5b"]
    assert [f"{s.spec}@{s.rank}" for s in resolved.students] == LADDER
    assert [(s.name, s.status) for s in resolved.stages] == [
        ("structure", "on"), ("audit", "on"), ("rederivation", "on"), ("judges", "on"), ("students", "on"),
        ("capability", "on")]
    assert str(resolved.solver) == "local:qwen2.5-coder-1.5b"  # the generator, offline
    assert stage(resolved, "students").models == LADDER and not stage(resolved, "students").left_out
    lines = run_header(config(), defaults, resolved)
    assert lines[0] == ("generator: local:qwen2.5-coder-1.5b; code that does not run is not refined: the next "
                        "round restarts without the curated example")
    assert run_header(config(generator="openai:gpt-4o"), defaults, resolved)[0] == "generator: openai:gpt-4o"
    assert run_header(config(restart_broken=False), defaults, resolved)[0] == "generator: local:qwen2.5-coder-1.5b"
    assert "  judge panel       on: local:qwen2.5-coder-1.5b; default panel; advisory panel (not validated at AUC " \
           ">= 0.7: itemsmith judges validate): its scores decide nothing; local judges read their score " \
           "distribution in one pass" in lines
    assert any(line.startswith(f"  student pool      on: {', '.join(LADDER)}; default ladder; answer by letter "
                               "log-likelihood, with and without the series (blind condition); advisory, run as "
                               "asked") for line in lines)
    assert "  capability filter on: accuracy against rank 1 < 2 < 3; drops expertise reversals and " \
           "blind-answerable templates" in lines


def test_a_missing_default_model_is_left_out_and_the_header_says_so(monkeypatch, running) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-1.5b")
    resolved = resolve_pipeline(config(), running)
    assert [f"{s.spec}@{s.rank}" for s in resolved.students] == [LADDER[0], LADDER[2]]
    assert stage(resolved, "capability").status == "on"  # ranks 1 and 3 remain
    assert "                    left out: local:qwen2.5-coder-0.5b@2: not installed: pip install " \
           "'itemsmith[local-small]'" in header_lines(resolved.stages)


def test_one_student_left_turns_the_capability_filter_off_and_no_judge_turns_the_panel_off(monkeypatch,
                                                                                           running) -> None:
    installed_only(monkeypatch, "smollm2-135m")
    resolved = resolve_pipeline(config(), running)
    assert resolved.judges == [] and [s.rank for s in resolved.students] == [1]
    judges, capability = stage(resolved, "judges"), stage(resolved, "capability")
    assert judges.status == "off" and judges.reason == "no default judge is installed"
    assert judges.left_out == ["local:qwen2.5-coder-1.5b: not installed: pip install 'itemsmith[local]'"]
    assert capability.status == "off"
    assert capability.reason.startswith("needs students of at least 2 different ranks, the pool has rank 1 only")
    lines = header_lines(resolved.stages)
    assert "  judge panel       off: no default judge is installed" in lines
    assert any(line.startswith("  capability filter off: needs students of at least 2") for line in lines)


def test_without_llama_cpp_every_local_default_is_left_out(monkeypatch, defaults) -> None:
    installed_only(monkeypatch, "smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", llama=False)
    resolved = resolve_pipeline(config(), defaults)
    assert resolved.judges == [] and resolved.students == []
    assert all("llama-cpp-python is not installed" in why for why in stage(resolved, "students").left_out)
    assert stage(resolved, "capability").reason == "no student pool"


def test_empty_lists_turn_stages_off_and_named_models_are_never_left_out(monkeypatch, running) -> None:
    installed_only(monkeypatch)  # nothing installed
    defaults = running
    off = resolve_pipeline(config(judges=[], students=[]), defaults)
    assert off.judges == [] and off.students == []
    assert stage(off, "judges").reason == "turned off (--no-judges, or judges: [])"
    assert stage(off, "students").reason == "turned off (--no-students, or students: [])"
    assert not stage(off, "judges").left_out
    named = resolve_pipeline(config(judges=["local:smollm2-135m"], students=["local:smollm2-135m@1"]), defaults)
    assert list(map(str, named.judges)) == ["local:smollm2-135m"] and [s.rank for s in named.students] == [1]
    assert stage(named, "judges").reason == ("advisory panel (not validated at AUC >= 0.7: itemsmith judges validate): "
                                             "its scores decide nothing; local judges read their score distribution "
                                             "in one pass")


def test_defaults_come_from_the_settings(monkeypatch, defaults) -> None:
    installed_only(monkeypatch)
    monkeypatch.setenv("ITEMSMITH_DEFAULT_JUDGES", '["openai:gpt-4o"]')
    monkeypatch.setenv("ITEMSMITH_DEFAULT_STUDENTS", '["openai:gpt-4o-mini@1", "openai:gpt-4o@2"]')
    resolved = resolve_pipeline(config(), AgentSettings())
    assert list(map(str, resolved.judges)) == ["openai:gpt-4o"]  # hosted: no install check (a missing key fails)
    assert stage(resolved, "students").reason.startswith("default ladder; answer by chat")
    monkeypatch.setenv("ITEMSMITH_DEFAULT_JUDGES", "[]")
    assert stage(resolve_pipeline(config(), AgentSettings()), "judges").reason == \
        "no default judge configured (ITEMSMITH_DEFAULT_JUDGES is empty)"
    monkeypatch.setenv("ITEMSMITH_DEFAULT_STUDENTS", '["local:smollm2-135m"]')
    with pytest.raises(SettingsError, match="ITEMSMITH_DEFAULT_STUDENTS: .*SPEC@RANK"):  # read with the settings
        get_settings()


def test_verifiers_of_the_caller_replace_judges_and_students(monkeypatch, defaults) -> None:
    installed_only(monkeypatch, "qwen2.5-coder-1.5b")
    resolved = resolve_pipeline(config(), defaults, custom=["my_check"])
    assert [(s.name, s.status) for s in resolved.stages][2:] == [  # the re-derivation is not replaced
        ("rederivation", "on"), ("custom", "on"), ("judges", "off"), ("students", "off"), ("capability", "off")]
    with pytest.raises(ProviderConfigError, match="not both"):
        resolve_pipeline(config(judges=["openai:gpt-4o"]), defaults, custom=["my_check"])


def judged(candidate: str, judges: dict[str, list[float]]) -> TemplateJudgement:
    criteria = PanelConfig().criteria
    scores = [JudgeScore(judge=judge, criterion=c, score=s, method="score_first")
              for judge, values in judges.items() for c, s in zip(criteria, values, strict=True)]
    return judgement_from_scores(candidate, scores, PanelConfig())


def test_agreement_of_one_judge_is_taken_over_its_criteria_and_of_several_between_judges() -> None:
    one = [judged("0:1", {"j": [8, 7, 8, 9, 8]}), judged("1:1", {"j": [3, 2, 3, 2, 4]})]
    single = judge_agreement(one)
    assert single["judge_agreement_basis"].startswith("criteria: one judge")
    assert single["judge_agreement_alpha"] > 0.8  # every criterion ranks the good candidate above the poor one
    assert judge_agreement(one[:1])["judge_agreement_alpha"] is None  # one candidate: nothing to rank
    panel = [judged("0:1", {"a": [8, 7, 8, 9, 8], "b": [3, 4, 3, 2, 3]}),  # b scores 11 - a
             judged("1:1", {"a": [3, 2, 3, 2, 4], "b": [8, 9, 8, 9, 7]})]
    between = judge_agreement(panel)
    assert between["judge_agreement_basis"].startswith("judges:")
    assert between["judge_agreement_alpha"] < 0  # the two judges disagree systematically
    assert judge_agreement([]) == {"judge_agreement_alpha": None,
                                   "judge_agreement_basis": "no candidate reached the judges"}


def test_capability_line_follows_what_the_configuration_drops(defaults) -> None:
    students = ["openai:gpt-4o-mini@1", "openai:gpt-4o@2"]
    keep_all = config(students=students, capability={"keep": {"reversal": True}}, pool={"blind": False})
    assert stage(resolve_pipeline(keep_all, defaults), "capability").reason == \
        "accuracy against rank 1 < 2; drops nothing"
    sighted = config(students=students, pool={"blind": False})
    assert stage(resolve_pipeline(sighted, defaults), "capability").reason == \
        "accuracy against rank 1 < 2; drops expertise reversals"
    assert stage(resolve_pipeline(sighted, defaults), "students").reason == "answer by chat, with the series only"


def test_the_solver_defaults_to_the_generator_and_a_missing_local_one_is_left_out(monkeypatch, defaults) -> None:
    installed_only(monkeypatch)  # nothing installed
    missing = resolve_pipeline(config(), defaults)
    assert missing.solver is None and missing.replay_only  # no solver model: the block calls are replayed
    assert stage(missing, "rederivation").status == "on" and stage(missing, "rederivation").models == [
        "trusted block replay"]
    assert stage(missing, "rederivation").left_out == [
        "local:qwen2.5-coder-1.5b: not installed: pip install 'itemsmith[local]'"]
    hosted = resolve_pipeline(config(generator="openai:gpt-4o"), defaults)
    assert str(hosted.solver) == "openai:gpt-4o" and stage(hosted, "rederivation").models == ["openai:gpt-4o"]
    named = resolve_pipeline(config(solver="local:qwen2.5-coder-0.5b"), defaults)  # named: never left out
    assert str(named.solver) == "local:qwen2.5-coder-0.5b" and stage(named, "rederivation").status == "on"
    off = resolve_pipeline(config(rederivation=False), defaults)
    assert off.solver is None and stage(off, "rederivation").reason == "turned off (--no-rederivation)"
    assert not off.replay_only
    monkeypatch.setenv("ITEMSMITH_SOLVER", "anthropic:claude-sonnet-4-5")
    assert str(resolve_pipeline(config(), AgentSettings()).solver) == "anthropic:claude-sonnet-4-5"
    line = next(line for line in header_lines(hosted.stages) if line.startswith("  re-derivation"))
    assert "openai:gpt-4o" in line and "no source, no key" in line and "not re-derivable: flagged" in line
