"""A judge counts only once it is validated (scripted judge models): the judges read the
re-derivation's finding in their prompt; a validated panel decides by its scores; a panel of
judges with no measured separation of good and flawed templates (AUC >= 0.7 on a corpus) is
advisory: its scores neither accept nor reject a template, the run header says so, and a
re-verification with it changes no version's status."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.factory import JudgeModel
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy
from itemsmith.agents.llm.providers import local as local_models
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.judge_validation import (
    JudgeValidation,
    advisory,
    load_validations,
    record_validation,
    validated,
)
from itemsmith.agents.stages.pipeline import Pipeline, header_lines, resolve_pipeline
from itemsmith.agents.stages.verification_stages import JudgePanelVerifier
from itemsmith.agents.stages.verify import Evidence, VerificationResult, run_stages
from itemsmith.items.schema import Decision, Item, RunStatus, StructureReport
from itemsmith.verification.judges import JudgeConfig, PanelConfig, separation_auc

FAST = RetryPolicy(max_retries=0, initial_s=0.0, max_s=0.0)
ITEMS = [Item(question=f"What is the mean level? ({i})", options=["1.0", "2.0", "3.0", "4.0"], answer_index=1,
              series=[{"name": "level", "values": [1.0, 3.0]}]) for i in range(3)]
PASSED = StructureReport(status=RunStatus.ok, items=ITEMS)
AGREED = Evidence(stage="rederivation", text="A solver picked the keyed option in 40 of 40.", corroborates=True)


def _panel(score: int, *, advisory: bool) -> tuple[JudgePanelVerifier, ScriptedChatModel]:
    model = ScriptedChatModel.from_source([f"Looks fine.\nScore: {score}"])
    judge = JudgeModel(JudgeConfig(name="scripted:judge", samples=1), ModelHandle(model, "scripted", "judge", 5.0))
    verifier = JudgePanelVerifier([judge], PanelConfig(), task="levels", dataset="water levels", retry=FAST,
                                  advisory=advisory)
    return verifier, model


def _judge(verifier: JudgePanelVerifier, *evidence: Evidence) -> VerificationResult:
    return asyncio.run(verifier("source", PASSED, evidence=evidence))


def _validation(judge: str, auc: float | None) -> JudgeValidation:
    return JudgeValidation(judge=judge, auc=auc, criteria={}, corpus="corpus", corpus_hash="0" * 64, good=13,
                           flawed=35, measured_at=datetime.now(UTC))


@pytest.fixture
def settings(tmp_path: Path) -> AgentSettings:
    return AgentSettings(judge_validations=tmp_path / "validations.json", default_judges=["local:qwen2.5-coder-1.5b"])


def test_scripted_judges_read_the_rederivation_in_their_prompt() -> None:
    verifier, model = _panel(9, advisory=False)
    _judge(verifier, AGREED)
    assert all("Independent checks of this template:\n- A solver picked the keyed option in 40 of 40." in p
               for p in model.prompts)


def test_scripted_validated_panel_decides_by_its_scores() -> None:
    assert _judge(_panel(9, advisory=False)[0]).decision.accepted
    assert not _judge(_panel(2, advisory=False)[0], AGREED).decision.accepted


@pytest.mark.parametrize("score", [1, 10])
def test_scripted_advisory_panel_neither_accepts_nor_rejects_by_its_scores(score: int) -> None:
    result = _judge(_panel(score, advisory=True)[0])
    assert result.decision.accepted and result.feedback is None  # the later stages decide
    assert result.decision.reasons[0].startswith(f"advisory panel {'passed' if score == 10 else 'failed'} "
                                                 "(no validated judge: its scores decide nothing)")
    assert result.judgement is not None and result.judgement.passed == (score == 10)  # its own verdict is kept


def test_evidence_reaches_the_panel_through_run_stages() -> None:
    async def rederived(source: str, report: StructureReport) -> VerificationResult:
        return VerificationResult(decision=Decision(accepted=True, stage="rederivation"), evidence=[AGREED])

    verifier, model = _panel(1, advisory=False)
    decision, _, results = asyncio.run(run_stages([rederived, verifier], "source", PASSED))
    assert not decision.accepted and "40 of 40" in model.prompts[0]


def test_a_judge_decides_only_once_validated_at_the_minimum_auc(settings: AgentSettings) -> None:
    judge = ModelSpec.parse("openai:gpt-4o")
    assert not validated(judge, settings) and advisory([judge], settings) == [judge]  # never measured
    record_validation(_validation("openai:gpt-4o", 0.64), settings)
    assert not validated(judge, settings)  # measured, but too weak
    record_validation(_validation("openai:gpt-4o", 0.81), settings)  # measured again: replaces the first
    assert validated(judge, settings) and advisory([judge], settings) == []
    assert list(load_validations(settings)) == ["openai:gpt-4o"]
    stricter = settings.model_copy(update={"min_judge_auc": 0.9})
    assert not validated(judge, stricter)
    record_validation(_validation("local:qwen2.5-coder-0.5b", None), settings)  # flat scores: not measurable
    assert not validated(ModelSpec.parse("local:qwen2.5-coder-0.5b"), settings)


def test_a_damaged_validations_file_is_a_clear_error(settings: AgentSettings) -> None:
    assert settings.judge_validations is not None
    settings.judge_validations.write_text("{not json")
    with pytest.raises(ValueError, match="not a judge validations file"):
        load_validations(settings)


def test_separation_auc_counts_ties_half() -> None:
    assert separation_auc([8, 9], [2, 3]) == 1.0 and separation_auc([5, 5], [5, 5]) == 0.5
    assert separation_auc([2], [8]) == 0.0 and separation_auc([], [1]) is None


def test_an_unvalidated_panel_is_advisory_and_the_header_says_so(monkeypatch: pytest.MonkeyPatch,
                                                                 settings: AgentSettings) -> None:

    monkeypatch.setattr(local_models, "installed", lambda name: True)
    monkeypatch.setattr(local_models, "llama_available", lambda: True)
    config = AuthorConfig(handler="weather", task="temperature questions", students=[])
    resolved = resolve_pipeline(config, settings)
    assert list(map(str, resolved.advisory_judges)) == ["local:qwen2.5-coder-1.5b"]
    line = next(line for line in header_lines(resolved.stages) if line.startswith("  judge panel"))
    assert "advisory panel" in line and "itemsmith judges validate" in line and "decide nothing" in line
    hosted = config.model_copy(update={"judges": [ModelSpec.parse("openai:gpt-4o")]})
    assert list(map(str, resolve_pipeline(hosted, settings).advisory_judges)) == ["openai:gpt-4o"]  # hosted too
    record_validation(_validation("openai:gpt-4o", 0.83), settings)
    trusted = resolve_pipeline(hosted, settings)
    assert trusted.advisory_judges == [] and "advisory" not in stage_reason(trusted)


def stage_reason(resolved: Pipeline) -> str:
    return next(s.reason for s in resolved.stages if s.name == "judges")
