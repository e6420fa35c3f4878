"""The judge panel and the student pool as stages of the authoring loop, with scripted models."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.factory import JudgeModel, StudentModel
from itemsmith.agents.llm.inference import ModelHandle, RetryPolicy
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.agents.stages.verification_stages import JudgePanelVerifier, StudentPoolVerifier
from itemsmith.cli.app import app
from itemsmith.items.schema import Item, RunStatus, StructureReport
from itemsmith.verification.capability import CapabilityConfig, Outcome
from itemsmith.verification.judges import JudgeConfig, PanelConfig
from itemsmith.verification.students import PoolConfig, StudentConfig

from ..conftest import AVERAGE, GOOD, fenced, plan_reply, scripted

LOWEST = AVERAGE  # another template that passes the structure check and the audit
AMBIGUOUS = "Two options round to the same level, so two answers are defensible"
FAST = RetryPolicy(max_retries=1, initial_s=0.0, max_s=0.0)


def judge_script(path: Path, low: int, high: int) -> str:
    """A judge that scores questions about the mean level `low` (with a rationale) and others `high`."""
    path.write_text(json.dumps({"rules": [
        {"match": "mean water level", "replies": [f"{AMBIGUOUS}.\nScore: {low}"]},
        {"match": ".", "replies": [f"Clear and answerable from the data.\nScore: {high}"]}]}))
    return f"scripted:{path}"


def test_scripted_judge_rejection_feeds_rationale_back_and_next_round_is_accepted(pool, handler_file, tmp_path,
                                                                                  validate_judge) -> None:
    generator = scripted([fenced(GOOD), fenced(LOWEST)])
    judges = [judge_script(tmp_path / "strict.json", 2, 9), judge_script(tmp_path / "lenient.json", 3, 8)]
    for judge in judges:
        validate_judge(str(judge))  # measured: its scores decide
    config = AuthorConfig(handler=str(handler_file), task="Questions about water levels", templates=1, slots=1,
                          out_dir=tmp_path / "out", checkpoint="memory", run_id="judged", judges=judges)
    report = asyncio.run(author(config, generator_model=generator, planner_model=scripted([plan_reply(["Level"])]),
                                pool=pool))
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["verify_rejected", "ok"], \
        [(a.status, a.error) for a in slot.attempts]
    rejected = slot.attempts[0].verification[-1]  # after the item audit
    assert rejected.decision.stage == "judges" and not rejected.decision.accepted
    assert any(reason.startswith("unambiguity: mean 2.50") for reason in rejected.decision.reasons)
    assert len(rejected.judgement.scores) == 10 and rejected.usage.calls == 10
    # the failing criteria's rationales went back to the generator
    assert AMBIGUOUS in generator.model.prompts[1] and "review panel rejected" in generator.model.prompts[1]
    accepted = slot.attempts[1].verification[-1]
    assert accepted.decision.accepted and accepted.judgement.aggregates[0].mean == 8.5
    summary = report.summary()["verification"]
    assert summary["acceptance_by_stage"]["structure"] == {"checked": 2, "passed": 2, "rate": 1.0}
    assert summary["acceptance_by_stage"]["judges"] == {"checked": 2, "passed": 1, "rate": 0.5}
    assert summary["judge_criterion_mean"]["relevance"] == pytest.approx((2 + 3 + 9 + 8) / 4, abs=1e-3)
    assert summary["judge_agreement_alpha"] > 0.8  # the two judges move together across the two candidates
    saved = json.loads((tmp_path / "out" / "judged" / "report.json").read_text())
    stored = saved["slots"][0]["attempts"][0]["verification"][-1]["judgement"]["scores"]
    assert {s["judge"] for s in stored} == set(judges)  # every judge's score and rationale kept


class ScriptedScorer:
    """A scripted `LetterScorer`: the letter `choose(prompt)` gets log-probability 0, others -5."""

    def __init__(self, choose: Callable[[str], str]) -> None:
        self.choose = choose
        self.prompts: list[str] = []

    def score_letters(self, prompt: str, letters: Sequence[str]) -> dict[str, float]:
        self.prompts.append(prompt)
        pick = self.choose(prompt)
        return {letter: 0.0 if letter == pick else -5.0 for letter in letters}


KEYS = "ABCDA"


def items() -> list[Item]:
    return [Item(question=f"Question {i}: which way does the level go?", options=["up", "down", "flat", "wave"],
                 answer_index="ABCD".index(KEYS[i]), series=[{"name": "level", "values": [1.0, 2.0, 3.0]}])
            for i in range(len(KEYS))]


def key_of(prompt: str) -> str:
    return KEYS[int(re.search(r"Question (\d)", prompt).group(1))]


def wrong_of(prompt: str) -> str:
    return "ABCD"[("ABCD".index(key_of(prompt)) + 1) % 4]


def blind(prompt: str) -> bool:
    return "data for this question is not shown" in prompt


PASSED = StructureReport(status=RunStatus.ok, items=items())


def pool_verifier(students: list[StudentModel]) -> StudentPoolVerifier:
    return StudentPoolVerifier(students, PoolConfig(), CapabilityConfig(bootstrap=500), task="levels",
                               dataset="water levels", retry=FAST)


def test_scripted_expertise_reversal_rejects_with_the_statistic() -> None:
    weak = ScriptedScorer(lambda p: wrong_of(p) if blind(p) else key_of(p))
    middle = ScriptedScorer(lambda p: key_of(p) if "Question 0" in p or "Question 1" in p else wrong_of(p))
    strong = ScriptedScorer(wrong_of)
    verifier = pool_verifier([StudentModel(StudentConfig(name="weak", rank=1), weak),
                              StudentModel(StudentConfig(name="middle", rank=2), middle),
                              StudentModel(StudentConfig(name="strong", rank=3), strong)])
    result = asyncio.run(verifier("source", PASSED))
    assert not result.decision.accepted and result.decision.stage == "students"
    assert result.capability.outcome is Outcome.reversal and result.capability.verdict.statistic == pytest.approx(-1.0)
    assert "reversal: weaker students beat stronger ones: rho -1.00" in result.decision.reasons[0]
    assert "Expertise reversal" in result.feedback and "rho -1.00" in result.feedback
    assert "weak 1.00, middle 0.40, strong 0.00" in result.feedback
    assert len(result.students.responses) == 3 * 5 * 2 and len(weak.prompts) == 10
    assert result.usage.calls == 30 and not result.errors


def chat_student(rule_blind: str) -> ModelHandle:
    """A scripted chat student that answers every item right with the series, and `rule_blind` without it."""
    rules = [{"match": f"not shown.*Question {i}\\b", "replies": [f"Answer: {rule_blind or KEYS[i]}"]}
             for i in range(len(KEYS))]
    rules += [{"match": f"Question {i}\\b", "replies": [f"The level rises.\nAnswer: {KEYS[i]}"]}
              for i in range(len(KEYS))]
    return ModelHandle(ScriptedChatModel.from_source({"rules": rules}), "scripted", "student", 5.0)


def test_scripted_blind_flag_rejects() -> None:
    verifier = pool_verifier([StudentModel(StudentConfig(name="small", rank=1), chat_student("")),
                              StudentModel(StudentConfig(name="large", rank=2), chat_student(""))])
    result = asyncio.run(verifier("source", PASSED))
    assert not result.decision.accepted and result.capability.verdict.blind_flag
    assert result.capability.outcome is Outcome.flat  # kept on its own: only the blind flag rejects
    assert any(r.startswith("blind: answered as well without the series (1.00)") for r in result.decision.reasons)
    assert "Blind check" in result.feedback and "p=0.000" in result.feedback
    assert all(r.choice is not None for r in result.students.responses)


def test_scripted_pool_whose_series_helps_is_accepted() -> None:
    verifier = pool_verifier([StudentModel(StudentConfig(name="small", rank=1), chat_student("D")),
                              StudentModel(StudentConfig(name="large", rank=2), ScriptedScorer(lambda p: "D" if blind(p)
                                                                                    else key_of(p)))])
    result = asyncio.run(verifier("source", PASSED))
    assert result.decision.accepted and result.feedback is None
    assert not result.capability.verdict.blind_flag
    assert result.students.blind.accuracy_blind == pytest.approx(0.2)  # "D" is the key of one item in five


def _broken_and_working_panel(panel: PanelConfig) -> tuple[JudgePanelVerifier, ModelHandle]:
    broken = ModelHandle(ScriptedChatModel.from_source([{"error": 401}]), "scripted", "broken", 5.0)
    working = ModelHandle(ScriptedChatModel.from_source(["Clear.\nScore: 9"]), "scripted", "working", 5.0)
    verifier = JudgePanelVerifier([JudgeModel(JudgeConfig(name="broken", samples=1, max_retries=1), broken),
                                   JudgeModel(JudgeConfig(name="working", samples=1), working)],
                                  panel, task="levels", dataset="water levels", retry=FAST)
    return verifier, broken


def test_scripted_judge_model_failure_is_missing_data_and_the_stage_errored_not_rejected() -> None:
    verifier, broken = _broken_and_working_panel(PanelConfig())
    result = asyncio.run(verifier("source", PASSED))
    missing = [s for s in result.judgement.scores if s.judge == "broken"]
    assert len(missing) == 5 and all(s.score is None and s.call_failed == "failed" and "HTTP 401" in s.error
                                     for s in missing)
    assert all(a.n_missing == 1 and a.n_scores == 1 for a in result.judgement.aggregates)
    # the default panel needs every judge: no verdict, so the stage errored (retryable), with no feedback
    assert result.errored and not result.decision.accepted and result.feedback is None
    assert "gave no usable reply" in result.decision.reasons[0] and "HTTP 401" in result.decision.reasons[0]
    # a permanent 401 is sent once per criterion: neither the retry layer nor the judge's parse retry re-asks it
    assert broken.model.calls == 5 and len(result.errors) == 5 and "permanent error" in result.errors[0]
    assert result.usage.calls == 10 and result.usage.failed_calls == 5 and result.usage.answered_calls == 5


def test_scripted_judge_failure_with_min_judges_lowered_accepts_on_the_rest() -> None:
    verifier, _ = _broken_and_working_panel(PanelConfig(min_judges=1))
    result = asyncio.run(verifier("source", PASSED))
    assert result.decision.accepted and not result.errored  # the user allowed a panel short of a judge


def test_scripted_judge_panel_errors_when_every_judge_fails() -> None:
    broken = ModelHandle(ScriptedChatModel.from_source([{"error": 401}]), "scripted", "broken", 5.0)
    verifier = JudgePanelVerifier([JudgeModel(JudgeConfig(name="broken", samples=1, max_retries=0), broken)], PanelConfig(),
                                  task="levels", dataset="water levels", retry=FAST)
    result = asyncio.run(verifier("source", PASSED))
    assert result.errored and not result.decision.accepted and result.feedback is None


def test_scripted_judge_giving_only_a_score_is_fed_back_without_a_reason() -> None:
    terse = ModelHandle(ScriptedChatModel.from_source(["Score: 2"]), "scripted", "terse", 5.0)
    verifier = JudgePanelVerifier([JudgeModel(JudgeConfig(name="terse", samples=1), terse)], PanelConfig(criteria=("relevance",)),
                                  task="levels", dataset="water levels", retry=FAST)
    result = asyncio.run(verifier("source", PASSED))
    assert not result.decision.accepted
    assert "Judge terse gave 2.0/10 (no reason given)" in result.feedback and "Score: 2" not in result.feedback


def test_scripted_author_cli_takes_judges_and_students(handler_file: Path, tmp_path: Path) -> None:
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps([fenced(GOOD)]))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level"])]))
    judge = judge_script(tmp_path / "judge.json", 8, 8)
    rules = [{"match": "not shown", "replies": ["I cannot tell without the data."]},  # unparsed: wrong
             {"match": ".", "replies": ["Answer: B"]}]  # the same letter for both students: no reversal
    students = []
    for rank in (1, 2):
        path = tmp_path / f"student{rank}.json"
        path.write_text(json.dumps({"rules": rules}))
        students += ["--student", f"scripted:{path}@{rank}"]
    result = CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "water levels",
                                      "--templates", "1", "--generator", f"scripted:{gen}", "--planner",
                                      f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "cli",
                                      "--no-live", "--judge", judge, *students])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{"):result.output.rindex("}") + 1])
    stages = summary["verification"]["acceptance_by_stage"]
    assert stages["judges"]["checked"] == 1 and stages["students"]["checked"] == 1
    assert set(summary["verification"]["student_accuracy_by_rank"]) == {"1", "2"}

    bad = CliRunner().invoke(app, ["author", "--handler", str(handler_file), "--task", "water levels",
                                   "--generator", f"scripted:{gen}", "--out", str(tmp_path / "out2"), "--no-live",
                                   "--student", "scripted:x.json@first"])
    assert bad.exit_code == 2 and "write SPEC@RANK" in bad.output
