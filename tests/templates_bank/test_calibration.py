"""Calibration in the bank, with scripted models of known strength answering a release through
the real evaluation path (their answers stored in the bank): abilities come out in the order of
strength, a mis-keyed template (strong models fail it, weak ones pass) is flagged for review,
verdicts are appended (history kept), too few respondents give the count needed (and a fit with
--priors), the pool's answers count and blind ones do not, a model failing half way leaves a
resumable evaluation; the `release calibrate` command."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from typer.testing import CliRunner

from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.cli.app import app
from itemsmith.items.hashing import item_hash
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import Item, StudentResponse
from itemsmith.templates_bank.calibration import (
    CALIBRATION_MODEL,
    CalibrationOptions,
    TooFewRespondentsError,
    calibrate_release,
    current_parameters,
    refresh_calibration,
    stored_responses,
)
from itemsmith.templates_bank.evaluation import EvaluationStore, ReleaseItems, evaluate, release_items, release_versions
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    EvaluationResponseCreate,
    create_bank,
    import_curated,
    list_evaluation_responses,
    list_verdicts,
    open_session,
    record_evaluation_response,
    record_student_response,
    upgrade,
)
from itemsmith.verification.students import Student, StudentConfig

TEMPLATES = ["exam_trend_direction", "exam_granger_direction", "feat_seasonality_classify",
             "tsaqa_puzzle_trend_season", "exam_pure_noise_tf"]
MIS_KEYED = "exam_pure_noise_tf"
DIFFICULTY = {"exam_trend_direction": -1.0, "exam_granger_direction": 0.0, "feat_seasonality_classify": 0.5,
              "tsaqa_puzzle_trend_season": 1.0}
STRENGTHS = [-2.0, -1.2, -0.4, 0.4, 1.2, 2.0]


def _uniform(name: str, item: Item) -> float:
    digest = hashlib.sha256(f"{name}:{item_hash(item)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def p_correct(strength: float, template: str) -> float:
    """A 2PL with a = 2.5; the mis-keyed template's curve runs backwards (strong models fail it)."""
    if template == MIS_KEYED:
        return 1 / (1 + np.exp(2.5 * strength))
    return 1 / (1 + np.exp(-2.5 * (strength - DIFFICULTY[template])))


def scripted(items: ReleaseItems, strength: float, name: str, templates: list[str] | None = None) -> Student:
    """A scripted model of known strength: on each item it replies with the right letter when a
    fixed pseudo-random draw for (model, item) falls below its 2PL probability, else a wrong one."""
    rules = []
    for run in items.runs:
        if templates is not None and run.template.template_id not in templates:
            continue
        for item in run.items:
            right = _uniform(name, item) < p_correct(strength, run.template.template_id)
            letter = item.answer_index if right else (item.answer_index + 1) % len(item.options)
            rules.append({"match": re.escape(render_item(item, TextFormat.plain)), "replies": [f"Answer: {chr(65 + letter)}"]})
    model = ScriptedChatModel.from_source({"rules": rules, "replies": ["I cannot tell."]}, model_name=name)
    return Student(StudentConfig(name=name, rank=0, model=f"scripted:{name}"), model)


def make_release(url: str, bank: str) -> Release:
    with open_session(url) as session:
        created = create_bank(session, BankCreate(name=bank, handler="synthetic", owner="tests"))
        import_curated(session, created.id, reviewer="tests", template_ids=TEMPLATES)
        return create_release(session, ReleaseCreate(bank=bank, seeds=[0, 1, 2], num_samples=4, created_by="tests"))


def evaluate_stored(url: str, release: Release, items: ReleaseItems, student: Student, evaluation_id: str):
    with open_session(url) as session:
        store = EvaluationStore.open(session, release, evaluation_id)
        return evaluate(items, student, store=store, parameters=current_parameters(session, release))


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Release, ReleaseItems]:
    """A release of five templates (one mis-keyed) answered by six scripted models of known strength."""
    url = f"sqlite:///{tmp_path_factory.mktemp('calibration') / 'bank.sqlite'}"
    upgrade(url)
    release = make_release(url, "calib")
    items = release_items(release)
    for i, strength in enumerate(STRENGTHS):
        evaluate_stored(url, release, items, scripted(items, strength, f"model-{i}"), f"eval-{i}")
    return url, release, items


def test_scripted_models_of_known_strength_get_abilities_in_order_and_the_mis_keyed_template_is_flagged(evaluated):
    url, release, _ = evaluated
    with open_session(url) as session:
        report = calibrate_release(session, release)
        parameters = current_parameters(session, release)
        irt = {t: list_verdicts(session, v, "irt") for t, v in release_versions(session, release).items()}
    ability = {r.respondent: r.ability for r in report.respondents}
    assert len(ability) == len(STRENGTHS) and not report.below_minimum
    assert spearmanr([ability[f"model-{i}"] for i in range(len(STRENGTHS))], STRENGTHS).statistic >= 0.9
    assert ability["model-5"] > ability["model-0"]
    assert report.needs_review == [MIS_KEYED]
    flagged = next(t for t in report.templates if t.template_id == MIS_KEYED)
    assert "negative_discrimination" in flagged.flags and flagged.slope_z < 0
    assert all("negative_discrimination" not in t.flags for t in report.templates if t.template_id != MIS_KEYED)
    assert all(t.n_respondents == len(STRENGTHS) and t.n_responses == len(STRENGTHS) * 12 for t in report.templates)
    # the verdicts: one per template, by the calibration, with standard errors; the newest is current
    assert all(len(v) >= 1 and v[-1].model == CALIBRATION_MODEL and v[-1].run_id == report.calibration_id
               for v in irt.values())
    assert parameters[MIS_KEYED].flags == flagged.flags and parameters[MIS_KEYED].difficulty_se > 0
    easy, hard = parameters["exam_trend_direction"].difficulty, parameters["tsaqa_puzzle_trend_season"].difficulty
    assert easy < hard


def test_calibrating_again_appends_a_verdict_and_keeps_the_history(evaluated):
    url, release, _ = evaluated
    with open_session(url) as session:
        before = {t: len(list_verdicts(session, v, "irt")) for t, v in release_versions(session, release).items()}
        again = calibrate_release(session, release)
        after = {t: list_verdicts(session, v, "irt") for t, v in release_versions(session, release).items()}
    assert all(len(after[t]) == before[t] + 1 and after[t][-1].run_id == again.calibration_id for t in after)


def test_scripted_stronger_model_gets_the_higher_ability_on_the_calibrated_release(evaluated):
    url, release, items = evaluated
    with open_session(url) as session:
        calibrate_release(session, release)
    strong = evaluate_stored(url, release, items, scripted(items, 1.6, "strong-new"), "eval-strong-new")
    weak = evaluate_stored(url, release, items, scripted(items, -1.6, "weak-new"), "eval-weak-new")
    assert strong.ability["plain"].theta > weak.ability["plain"].theta
    assert strong.templates_without_irt == [] and strong.evaluation_id == "eval-strong-new"


def test_an_evaluation_with_a_new_model_refreshes_the_calibration_and_a_known_one_does_not(evaluated):
    url, release, items = evaluated
    evaluate_stored(url, release, items, scripted(items, 0.0, "newcomer"), "eval-newcomer")
    with open_session(url) as session:
        refreshed = refresh_calibration(session, release, "eval-newcomer", "newcomer")
        assert not isinstance(refreshed, str) and "newcomer" in {r.respondent for r in refreshed.respondents}
    evaluate_stored(url, release, items, scripted(items, 0.0, "newcomer"), "eval-newcomer-2")
    with open_session(url) as session:
        skipped = refresh_calibration(session, release, "eval-newcomer-2", "newcomer")
    assert isinstance(skipped, str) and "answered these templates before" in skipped


def test_too_few_respondents_says_how_many_are_needed_and_priors_still_fit(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'few.sqlite'}"
    upgrade(url)
    release = make_release(url, "few")
    items = release_items(release)
    for i, strength in enumerate([-1.0, 0.0, 1.0]):
        evaluate_stored(url, release, items, scripted(items, strength, f"few-{i}"), f"few-eval-{i}")
    with open_session(url) as session:
        with pytest.raises(TooFewRespondentsError, match=r"3 respondent\(s\).*at least 5.*--priors") as caught:
            calibrate_release(session, release)
        assert (caught.value.found, caught.value.needed) == (3, 5)
        assert all(list_verdicts(session, v, "irt") == [] for v in release_versions(session, release).values())
        report = calibrate_release(session, release, CalibrationOptions(priors=True))
    assert report.below_minimum and len(report.respondents) == 3 and len(report.templates) == len(TEMPLATES)
    runner = CliRunner()
    refused = runner.invoke(app, ["release", "calibrate", "few@1", "--db", url])
    assert refused.exit_code == 1 and "3 respondent(s)" in refused.output and "at least 5" in refused.output
    fitted = runner.invoke(app, ["release", "calibrate", "few@1", "--priors", "--db", url])
    assert fitted.exit_code == 0, fitted.output
    assert "fewer respondents than 5" in fitted.output


def test_no_answers_at_all_is_refused_with_what_to_do(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'empty.sqlite'}"
    upgrade(url)
    make_release(url, "empty")
    out = CliRunner().invoke(app, ["release", "calibrate", "empty@1", "--priors", "--db", url])
    assert out.exit_code == 1 and "no stored answers" in out.output


def test_pool_answers_count_blind_ones_do_not_and_copies_count_once(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'pool.sqlite'}"
    upgrade(url)
    release = make_release(url, "pool")
    items = release_items(release)
    run = items.runs[0]
    with open_session(url) as session:
        version = release_versions(session, release)[run.template.template_id]
        for blind in (False, True):
            answer = StudentResponse(student="pool-student", rank=1, item_index=0, blind=blind, raw="Answer: A",
                                     choice=0, correct=True)
            record_student_response(session, version, answer, item_hash=item_hash(run.items[0]))
        record_student_response(session, version, StudentResponse(student="pool-student", rank=1, item_index=0,
                                                                   raw="Answer: B", choice=1, correct=False),
                                item_hash=item_hash(run.items[0]))  # the same item again: one observation
        frame = stored_responses(session, release_versions(session, release))
    assert len(frame) == 1 and frame.iloc[0]["source"] == "pool" and not frame.iloc[0]["correct"]


def test_the_same_answer_stored_by_the_pool_and_an_evaluation_counts_once(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'both.sqlite'}"
    upgrade(url)
    release = make_release(url, "both")
    run = release_items(release).runs[0]
    hashed = item_hash(run.items[0])
    with open_session(url) as session:
        version = release_versions(session, release)[run.template.template_id]
        record_student_response(session, version, StudentResponse(student="m", rank=1, item_index=0, raw="Answer: A",
                                                                   choice=0, correct=True),
                                item_hash=hashed, prompt_hash="p1")
        for prompt in ("p1", "p2"):  # the same prompt as the pool's, then another rendering
            record_evaluation_response(session, EvaluationResponseCreate(
                evaluation_id="e", template_version_id=version, model="m", text_format="plain", seed=0,
                item_index=0, item_hash=hashed, prompt_hash=prompt, raw="Answer: A", choice=0, correct=True))
        frame = stored_responses(session, release_versions(session, release))
    assert sorted(frame["instance"]) == [f"{hashed}:p1", f"{hashed}:p2"]


def test_scripted_model_failing_half_way_leaves_a_resumable_evaluation_not_a_report(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'resume.sqlite'}"
    upgrade(url)
    release = make_release(url, "resume")
    items = release_items(release)
    total = sum(len(run.items) for run in items.runs)
    failing = Student(StudentConfig(name="flaky", rank=0), ScriptedChatModel.from_source(
        {"replies": ["Answer: A"] * 7 + [{"error": 400}]}, model_name="flaky"))
    with open_session(url) as session:
        store = EvaluationStore.open(session, release, "eval-flaky")
        with pytest.raises(Exception, match="400"):
            evaluate(items, failing, store=store, max_concurrency=1)
        assert len(list_evaluation_responses(session, evaluation_id="eval-flaky")) == 7
    report = evaluate_stored(url, release, items, scripted(items, 0.5, "flaky"), "eval-flaky")
    assert report.reused_answers == 7 and report.overall.n == total
    with open_session(url) as session:
        stored = list_evaluation_responses(session, evaluation_id="eval-flaky")
    assert len(stored) == total and len({(r.template_version_id, r.item_hash, r.item_index) for r in stored}) == total


def test_stored_evaluation_answers_are_append_only(evaluated):
    from sqlalchemy import text

    from itemsmith.templates_bank.storage import EvaluationResponseRow, ImmutableRecordError

    url, _, _ = evaluated
    with pytest.raises(ImmutableRecordError, match="append-only"):
        with open_session(url) as session:
            row = session.get(EvaluationResponseRow, 1)
            row.correct = not row.correct
            session.flush()
    with pytest.raises(Exception, match="append-only"):
        with open_session(url) as session:
            session.execute(text("DELETE FROM evaluation_responses WHERE id = 1"))


def test_stored_answers_and_calibration_on_each_backend(backend_url: str):
    """SQLite and PostgreSQL (JSONB verdicts, the append-only trigger of migration 0004)."""
    from sqlalchemy import text

    upgrade(backend_url)
    release = make_release(backend_url, "backends")
    items = release_items(release)
    for i, strength in enumerate([-1.0, 1.0]):
        evaluate_stored(backend_url, release, items, scripted(items, strength, f"b-{i}"), f"b-eval-{i}")
    with open_session(backend_url) as session:
        report = calibrate_release(session, release, CalibrationOptions(priors=True))
    with open_session(backend_url) as session:
        parameters = current_parameters(session, release)
        assert len(list_evaluation_responses(session, evaluation_id="b-eval-0")) == 60
    assert report.below_minimum and set(parameters) == set(TEMPLATES)
    assert all(p.difficulty_se > 0 for p in parameters.values())
    with pytest.raises(Exception, match="append-only"):
        with open_session(backend_url) as session:
            session.execute(text("UPDATE evaluation_responses SET correct = NOT correct"))
