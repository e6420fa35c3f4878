"""Judges that cannot be trusted say so (scripted judge models): the judges read the
re-derivation's finding in their prompt; an advisory panel's scores neither accept nor reject a
template, it is accepted only when an independent check confirms the keys (the re-derivation
agreed, or a capability filter decides after the panel); the run header says the panel is advisory."""

from __future__ import annotations

import asyncio

import pytest

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.inference import ModelHandle, RetryPolicy
from itemsmith.agents.model_factory import JudgeModel
from itemsmith.agents.pipeline import Pipeline, header_lines, resolve_pipeline
from itemsmith.agents.scripted import ScriptedChatModel
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.specs import ModelSpec
from itemsmith.agents.verification_stages import JudgePanelVerifier
from itemsmith.agents.verify import Evidence, VerificationResult, run_stages
from itemsmith.items.schema import Decision, Item, RunStatus, StructureReport
from itemsmith.verification.judges import JudgeConfig, PanelConfig

FAST = RetryPolicy(max_retries=0, initial_s=0.0, max_s=0.0)
ITEMS = [Item(question=f"What is the mean level? ({i})", options=["1.0", "2.0", "3.0", "4.0"], answer_index=1,
              series=[{"name": "level", "values": [1.0, 3.0]}]) for i in range(3)]
PASSED = StructureReport(status=RunStatus.ok, items=ITEMS)
AGREED = Evidence(stage="rederivation", text="A solver picked the keyed option in 40 of 40.", corroborates=True)
UNSOLVED = Evidence(stage="rederivation", text="A solver could not compute the answers.", corroborates=False)


def _panel(score: int, *, advisory: bool, later: tuple[str, ...] = ()) -> tuple[JudgePanelVerifier, ScriptedChatModel]:
    model = ScriptedChatModel.from_source([f"Looks fine.\nScore: {score}"])
    judge = JudgeModel(JudgeConfig(name="scripted:judge", samples=1), ModelHandle(model, "scripted", "judge", 5.0))
    verifier = JudgePanelVerifier([judge], PanelConfig(), task="levels", dataset="water levels", retry=FAST,
                                  advisory=advisory, corroborated_later=later)
    return verifier, model


def _judge(verifier: JudgePanelVerifier, *evidence: Evidence) -> VerificationResult:
    return asyncio.run(verifier("source", PASSED, evidence=evidence))


def test_scripted_judges_read_the_rederivation_in_their_prompt() -> None:
    verifier, model = _panel(9, advisory=False)
    _judge(verifier, AGREED)
    assert all("Independent checks of this template:\n- A solver picked the keyed option in 40 of 40." in p
               for p in model.prompts)


def test_scripted_trusted_panel_decides_by_its_scores() -> None:
    assert _judge(_panel(9, advisory=False)[0]).decision.accepted
    assert not _judge(_panel(2, advisory=False)[0], AGREED).decision.accepted


def test_scripted_advisory_panel_with_high_scores_cannot_accept_alone() -> None:
    for evidence in ((), (UNSOLVED,)):
        result = _judge(_panel(10, advisory=True)[0], *evidence)
        assert not result.decision.accepted and result.decision.stage == "judges"
        assert "cannot accept a template alone" in result.decision.reasons[0]
        assert result.judgement is not None and result.judgement.passed  # its own verdict is kept


def test_scripted_advisory_panel_accepts_when_the_rederivation_agreed_even_with_low_scores() -> None:
    result = _judge(_panel(1, advisory=True)[0], AGREED)
    assert result.decision.accepted and result.judgement is not None and not result.judgement.passed
    assert result.decision.reasons[0].startswith("advisory panel failed (its scores decide nothing)")
    assert "decided by the rederivation (it agreed with the keys)" in result.decision.reasons[1]


def test_scripted_advisory_panel_leaves_the_decision_to_a_capability_filter_after_it() -> None:
    result = _judge(_panel(1, advisory=True, later=("the capability filter",))[0])
    assert result.decision.accepted and "decided by the capability filter" in result.decision.reasons[1]


def test_evidence_reaches_the_panel_through_run_stages() -> None:
    async def rederived(source: str, report: StructureReport) -> VerificationResult:
        return VerificationResult(decision=Decision(accepted=True, stage="rederivation"), evidence=[AGREED])

    verifier, model = _panel(1, advisory=True)
    decision, _, results = asyncio.run(run_stages([rederived, verifier], "source", PASSED))
    assert decision.accepted and results[1].decision.accepted and "40 of 40" in model.prompts[0]


def test_the_default_local_judge_is_advisory_and_the_header_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from itemsmith.agents import pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "installed", lambda name: True)
    monkeypatch.setattr(pipeline_module, "llama_available", lambda: True)
    monkeypatch.delenv("ITEMSMITH_ADVISORY_JUDGES", raising=False)
    settings = AgentSettings(default_judges=["local:qwen2.5-coder-1.5b"])
    config = AuthorConfig(handler="weather", task="temperature questions", students=[])
    resolved = resolve_pipeline(config, settings)
    assert list(map(str, resolved.advisory_judges)) == ["local:qwen2.5-coder-1.5b"]
    line = next(line for line in header_lines(resolved.stages) if line.startswith("  judge panel"))
    assert "advisory panel" in line and "never accept a template alone" in line
    trusted = resolve_pipeline(config.model_copy(update={"judges": [ModelSpec.parse("openai:gpt-4o")]}), settings)
    assert trusted.advisory_judges == [] and "advisory" not in stage_reason(trusted)
    cleared = resolve_pipeline(config.model_copy(update={"advisory_judges": []}), settings)
    assert cleared.advisory_judges == []


def stage_reason(resolved: Pipeline) -> str:
    return next(s.reason for s in resolved.stages if s.name == "judges")
