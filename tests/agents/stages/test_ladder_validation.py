"""A ladder of local students filters only once validated (`agents.stages.ladder_validation`): the
built-in measurement of the default ladder is what `ladder_auc` gives on the answers it was measured
on; such a ladder is skipped by default and the header, the pipeline and every accepted template's
decision say why; run as asked, a hosted ladder, or a validated one filters as before; local students
answer at most as many items at once as the cores run."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.factory import StudentModel
from itemsmith.agents.llm.inference import RetryPolicy
from itemsmith.agents.llm.providers import local as local_models
from itemsmith.agents.llm.spec import StudentSpec
from itemsmith.agents.settings import DEFAULT_LOCAL_STUDENTS, AgentSettings
from itemsmith.agents.stages.ladder_validation import (
    MEASURED,
    MIN_TEMPLATES,
    LadderValidation,
    advisory_ladder,
    ladder_name,
    load_ladder_validations,
    measure_ladder,
    record_ladder_validation,
)
from itemsmith.agents.stages.pipeline import header_lines, resolve_pipeline
from itemsmith.agents.stages.verification_stages import (
    ReviewModels,
    SkippedStudents,
    StudentPoolVerifier,
    content_stages,
    local_student_calls,
)
from itemsmith.agents.stages.verify import run_stages
from itemsmith.items.schema import Item, RunStatus, StructureReport, StudentResponse
from itemsmith.verification.students import StudentConfig, StudentReport

FAST = RetryPolicy(max_retries=0, initial_s=0.0, max_s=0.0)
LADDER = [str(s) for s in DEFAULT_LOCAL_STUDENTS]
# accuracy with the series of ranks 1 / 2 / 3 on the candidates of the 2026-12-07 weather run, 20 items each
# (benchmarks/results/history/author_run.toml): volatility_regime, most_alike, unusual(win, 3), leads
MEASURED_RUN = [(0.25, 0.35, 0.25), (0.25, 0.35, 0.35), (0.25, 0.20, 0.20), (0.20, 0.35, 0.45)]
HOSTED = ["openai:gpt-4o-mini@1", "openai:gpt-4o@2"]


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AgentSettings:
    """The built-in defaults, every local model installed, a fresh validations file."""
    for name in ("ITEMSMITH_DEFAULT_STUDENTS", "ITEMSMITH_ADVISORY_STUDENTS", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(local_models, "installed", lambda name: True)
    monkeypatch.setattr(local_models, "llama_available", lambda: True)
    return AgentSettings(ladder_validations=tmp_path / "ladders.json", default_judges=[])


def config(**overrides: object) -> AuthorConfig:
    return AuthorConfig.model_validate({"handler": "weather", "task": "weather questions", **overrides})


def report(template: str, accuracies: tuple[float, ...], items: int = 20) -> StudentReport:
    """Each student of `LADDER` right on its accuracy's share of `items`."""
    responses = [StudentResponse(student=spec.rpartition("@")[0], rank=rank, item_index=i, raw="", choice=0,
                                 correct=i < round(accuracy * items))
                 for rank, (spec, accuracy) in enumerate(zip(LADDER, accuracies, strict=True), start=1)
                 for i in range(items)]
    return StudentReport(template_id=template, responses=responses, chance=0.25, n_items=items)


def test_the_built_in_measurement_is_the_ladder_auc_of_the_run_it_was_measured_on() -> None:
    measured = measure_ladder([report(str(i), acc) for i, acc in enumerate(MEASURED_RUN)], source="the run")
    assert measured.ladder == MEASURED.ladder == ", ".join(LADDER)
    assert (measured.auc, measured.pairs, measured.templates) == (MEASURED.auc, MEASURED.pairs, MEASURED.templates)
    assert not measured.decisive(AgentSettings().min_ladder_auc)


def test_the_default_local_ladder_is_skipped_and_every_place_says_why(settings) -> None:
    resolved = resolve_pipeline(config(), settings)
    students = next(s for s in resolved.stages if s.name == "students")
    capability = next(s for s in resolved.stages if s.name == "capability")
    assert resolved.students == [] and students.status == "off" and students.models == LADDER
    assert resolved.skipped_students == ("advisory/skipped, the local ladder does not separate (measured: AUC 0.62 "
                                         "over 12 rank pairs of 4 templates, " + MEASURED.source + ", 2026-12-07; 0.7 "
                                         "needed)")
    assert students.reason == f"{resolved.skipped_students}; --run-advisory-students (ITEMSMITH_ADVISORY_STUDENTS=run) runs it"
    assert (capability.status, capability.reason) == ("off", "the student ladder is advisory (skipped)")
    assert f"  student pool      off: {students.reason}" in header_lines(resolved.stages)


def test_run_as_asked_a_hosted_or_a_validated_ladder_answers(settings) -> None:
    forced = resolve_pipeline(config(), settings.model_copy(update={"advisory_students": "run"}))
    assert list(map(str, forced.students)) == LADDER and forced.skipped_students is None
    assert "advisory, run as asked" in next(s for s in forced.stages if s.name == "students").reason
    hosted = resolve_pipeline(config(students=HOSTED), settings)
    assert list(map(str, hosted.students)) == HOSTED and hosted.skipped_students is None
    assert advisory_ladder([StudentSpec.model_validate(s) for s in HOSTED], settings) is None
    record_ladder_validation(MEASURED.model_copy(update={"auc": 0.8, "templates": MIN_TEMPLATES}), settings)
    assert list(map(str, resolve_pipeline(config(), settings).students)) == LADDER


def test_a_recorded_measurement_replaces_the_built_in_one_and_an_unmeasured_ladder_is_advisory(settings) -> None:
    assert load_ladder_validations(settings) == {MEASURED.ladder: MEASURED}
    two = [StudentSpec.model_validate(s) for s in ("local:qwen2.5-coder-1.5b@2", "local:smollm2-135m@1")]
    assert ladder_name(two) == "local:smollm2-135m@1, local:qwen2.5-coder-1.5b@2"
    assert advisory_ladder(two, settings) == ("the local ladder's separation is not measured (AUC >= 0.7 needed: "
                                              "itemsmith judges validate-ladder)")
    low = LadderValidation(ladder=ladder_name(two), auc=0.55, pairs=10, templates=10, source="runs",
                           measured_at=datetime(2026, 12, 8, tzinfo=UTC))
    path = record_ladder_validation(low, settings)
    assert path == settings.ladder_validations and load_ladder_validations(settings)[low.ladder] == low
    assert "does not separate (measured: AUC 0.55 over 10 rank pairs of 10 templates" in advisory_ladder(two, settings)
    record_ladder_validation(low.model_copy(update={"auc": 0.75}), settings)
    assert advisory_ladder(two, settings) is None


def test_a_skipped_ladder_accepts_with_its_reason_in_the_decision() -> None:
    models = ReviewModels(judges=[], students=[], skipped_students="advisory/skipped, the local ladder does not "
                                                                   "separate")
    stages = content_stages(models, config(), dataset="weather", retry=FAST)
    assert stages == [SkippedStudents(models.skipped_students)]
    items = [Item(question="Which?", options=["a", "b"], answer_index=0, series=[{"name": "x", "values": [1.0]}])]
    decision, feedback, results = asyncio.run(run_stages(stages, "source", StructureReport(status=RunStatus.ok,
                                                                                           items=items)))
    assert decision.accepted and feedback is None and results[0].students is None
    assert decision.reasons == ["students: advisory/skipped, the local ladder does not separate"]


def test_local_students_answer_at_most_as_many_items_at_once_as_the_cores_run(monkeypatch, settings) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    local = list(DEFAULT_LOCAL_STUDENTS)
    assert local_student_calls(local, settings.model_copy(update={"local_n_threads": 2})) == 1
    assert local_student_calls(local, settings.model_copy(update={"local_n_threads": 1})) == 2
    assert local_student_calls(local, settings.model_copy(update={"local_n_threads": 8})) == 1
    assert local_student_calls([*local, StudentSpec.model_validate(HOSTED[0])], settings) is None


def test_the_cap_holds_over_every_template_the_stage_verifies_at_once() -> None:
    in_flight, most = 0, 0

    class Scorer:
        def score_letters(self, prompt: str, letters: Sequence[str]) -> dict[str, float]:
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            time.sleep(0.01)
            in_flight -= 1
            return {letter: -float(i) for i, letter in enumerate(letters)}

    students = [StudentModel(StudentConfig(name=f"local:s{rank}", rank=rank), Scorer()) for rank in (1, 2, 3)]
    items = [Item(question=f"Which? {i}", options=["a", "b"], answer_index=0, series=[{"name": "x", "values": [1.0]}])
             for i in range(4)]
    report = StructureReport(status=RunStatus.ok, items=items)
    for calls in (1, None):  # None: each template's own limit
        [stage] = content_stages(ReviewModels(judges=[], students=students, student_calls=calls), config(),
                                 dataset="weather", retry=FAST)
        assert isinstance(stage, StudentPoolVerifier)

        async def two_slots(verifier: StudentPoolVerifier) -> None:
            await asyncio.gather(verifier("one", report), verifier("two", report))

        most = 0
        asyncio.run(two_slots(stage))
        assert most == 1 if calls == 1 else most > 1
