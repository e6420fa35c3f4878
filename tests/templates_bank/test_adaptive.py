"""Adaptive evaluation: the loop on simulated 2PL respondents (stops at the SE target with far
fewer items than the bank, picks informative templates, exposure control), and on a calibrated
release with scripted models of known strength (fresh instances, stored and resumable answers,
the stronger model gets the higher ability); the CLI's --adaptive."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.cli.app import app
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import IRTParameters
from itemsmith.templates_bank.adaptive import (
    AdaptiveConfig,
    Administered,
    CalibratedItem,
    adaptive_evaluate_release,
    adaptive_table,
    next_template,
    run_adaptive,
)
from itemsmith.templates_bank.calibration import current_parameters
from itemsmith.templates_bank.evaluation import EvaluationStore, fresh_seeds
from itemsmith.templates_bank.regeneration import TemplateRun, regenerate
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    import_curated,
    list_evaluation_responses,
    open_session,
    record_verdict,
    upgrade,
)
from itemsmith.verification.students import Student, StudentConfig

# --- the loop on simulated respondents ------------------------------------------------------------


def bank_of(templates: int, seed: int = 0) -> tuple[list[CalibratedItem], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.lognormal(0.0, 0.4, templates), rng.normal(0.0, 1.0, templates)
    return [CalibratedItem(f"t{j}", float(a[j]), float(b[j])) for j in range(templates)], a, b


def simulated(theta: float, a: np.ndarray, b: np.ndarray, seed: int):
    rng = np.random.default_rng(seed)
    return lambda index, use: Administered(correct=bool(rng.random() < 1 / (1 + np.exp(-a[index] * (theta - b[index])))))


def test_simulated_respondent_stops_at_the_se_target_with_far_fewer_items_than_the_bank():
    items, a, b = bank_of(200)
    result = run_adaptive(items, simulated(0.5, a, b, seed=1), AdaptiveConfig(target_se=0.3, max_items=200, max_uses=1))
    assert result.stopped == "target_se" and result.se <= 0.3
    assert result.items_used < 60  # of 200 templates
    assert len(result.trajectory) == result.items_used and result.trajectory[-1].se == result.se
    assert len({s.template_id for s in result.trajectory}) == result.items_used  # max_uses=1
    assert 0.0 < result.predicted_accuracy < 1.0


def test_simulated_respondents_adaptive_order_needs_fewer_items_than_random_order():
    items, a, b = bank_of(200, seed=2)
    adaptive, random_order = [], []
    for r, theta in enumerate(np.random.default_rng(3).normal(size=30)):
        adaptive.append(run_adaptive(items, simulated(theta, a, b, r), AdaptiveConfig(seed=r)).items_used)
        random_order.append(run_adaptive(items, simulated(theta, a, b, r),
                                         AdaptiveConfig(seed=r, top_k=len(items), exposure="randomesque")).items_used)
    assert np.mean(adaptive) * 1.5 < np.mean(random_order)


def test_simulated_stronger_respondent_gets_the_higher_ability():
    items, a, b = bank_of(100, seed=4)
    strong = run_adaptive(items, simulated(1.5, a, b, 5), AdaptiveConfig())
    weak = run_adaptive(items, simulated(-1.5, a, b, 6), AdaptiveConfig())
    assert strong.theta - 2 * strong.se > weak.theta + 2 * weak.se


def test_budget_and_exhaustion_stop_the_loop():
    items, a, b = bank_of(5)
    budget = run_adaptive(items, simulated(0.0, a, b, 1), AdaptiveConfig(target_se=0.01, max_items=3))
    assert budget.stopped == "max_items" and budget.items_used == 3
    out = run_adaptive(items, simulated(0.0, a, b, 1), AdaptiveConfig(target_se=0.01, max_items=100, max_uses=2))
    assert out.stopped == "exhausted" and out.items_used == 10
    with pytest.raises(ValueError, match="no calibrated templates"):
        run_adaptive([], simulated(0.0, a, b, 1))


def test_picks_the_most_informative_template_and_randomizes_among_the_top_k():
    items = [CalibratedItem("far", 2.0, 3.0), CalibratedItem("near", 2.0, 0.1), CalibratedItem("flat", 0.2, 0.0)]
    rng = np.random.default_rng(0)
    uses = np.zeros(3, dtype=int)
    once = {"max_uses": 1}
    assert next_template(0.0, items, uses, AdaptiveConfig(top_k=1, **once), rng) == 1
    assert next_template(0.0, items, np.array([0, 1, 0]), AdaptiveConfig(top_k=1, **once), rng) == 2  # "near" used up
    picks = {next_template(0.0, items, uses, AdaptiveConfig(top_k=2, **once), rng) for _ in range(50)}
    assert picks == {1, 2}  # "flat" (a^2/4 = 0.01) beats "far" (4 p q at 3 SDs off = 0.0099)
    assert next_template(0.0, items, np.ones(3, dtype=int), AdaptiveConfig(**once), rng) is None


def test_shrinking_exposure_narrows_the_draw_with_each_pick_and_randomesque_does_not():
    items = [CalibratedItem(f"t{j}", 1.0 + j, 0.0) for j in range(4)]  # information grows with j
    rng = np.random.default_rng(0)
    config = AdaptiveConfig(top_k=3, max_uses=10)
    first = {next_template(0.0, items, np.zeros(4, dtype=int), config, rng) for _ in range(60)}
    second = {next_template(0.0, items, np.array([0, 0, 0, 1]), config, rng) for _ in range(60)}
    third = {next_template(0.0, items, np.array([0, 0, 1, 1]), config, rng) for _ in range(60)}
    assert (first, second, third) == ({1, 2, 3}, {2, 3}, {3})
    spread = AdaptiveConfig(top_k=3, max_uses=10, exposure="randomesque")
    assert {next_template(0.0, items, np.array([0, 0, 1, 1]), spread, rng) for _ in range(60)} == {1, 2, 3}


# --- on a calibrated release, scripted models of known strength --------------------------------------

TEMPLATES = ["exam_trend_direction", "exam_granger_direction", "feat_seasonality_classify",
             "tsaqa_puzzle_trend_season", "exam_pure_noise_tf"]
DIFFICULTY = dict(zip(TEMPLATES, [-2.0, -1.0, 0.0, 1.0, 2.0], strict=True))
CONFIG = AdaptiveConfig(target_se=0.5, max_items=12, top_k=1, max_uses=4, seed=3)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Release, dict[str, list]]:
    """A release of five templates with known parameters (a = 3, b = -2 .. 2) and every fresh
    instance the adaptive runs with CONFIG can be shown (to script the models' answers)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('adaptive') / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name="adaptive", handler="synthetic", owner="tests"))
        for version in import_curated(session, bank.id, reviewer="tests", template_ids=TEMPLATES):
            record_verdict(session, version.id, IRTParameters(discrimination=3.0, difficulty=DIFFICULTY[
                version.template_key], discrimination_se=0.1, difficulty_se=0.1))
        release = create_release(session, ReleaseCreate(bank="adaptive", seeds=[0, 1, 2], num_samples=4,
                                                        created_by="tests"))
    seeds = fresh_seeds({0, 1, 2}, CONFIG.max_items, CONFIG.seed)
    runs = [TemplateRun(t.template_id, release.sources[t.version], release.local_handler(t), tuple(seeds), t.num_samples)
            for t in release.manifest.templates]
    fresh: dict[str, list] = {}
    for run in regenerate(runs):
        fresh.setdefault(run.run.template_id, []).extend(run.items)
    return url, release, fresh


def knows(fresh: dict[str, list], known: set[str], name: str) -> Student:
    """A scripted model of known strength: right on every instance of the templates it knows,
    wrong on the others."""
    rules = [{"match": re.escape(render_item(item, TextFormat.plain)),
              "replies": [f"Answer: {chr(65 + (item.answer_index if template in known else (item.answer_index + 1) % len(item.options)))}"]}
             for template, items in fresh.items() for item in items]
    model = ScriptedChatModel.from_source({"rules": rules, "replies": ["I cannot tell."]}, model_name=name)
    return Student(StudentConfig(name=name, rank=0, model=f"scripted:{name}"), model)


def test_scripted_strong_and_weak_models_adaptive_on_fresh_instances(calibrated):
    url, release, fresh = calibrated
    with open_session(url) as session:
        parameters = current_parameters(session, release)
    strong = adaptive_evaluate_release(release, knows(fresh, set(TEMPLATES[:3]), "strong"), parameters, config=CONFIG)
    weak = adaptive_evaluate_release(release, knows(fresh, set(TEMPLATES[:1]), "weak"), parameters, config=CONFIG)
    for report in (strong, weak):
        assert report.stopped == "target_se" and report.se <= CONFIG.target_se
        assert report.items_used < report.release_items == 60
        used_seeds = {s.seed for s in report.trajectory}
        assert used_seeds.isdisjoint({0, 1, 2}) and len(used_seeds) == report.items_used  # fresh instances
    assert 0.0 < strong.theta < 1.0 and -2.0 < weak.theta < -1.0
    assert strong.predicted_accuracy > weak.predicted_accuracy
    assert "ability" in adaptive_table(strong) and "stopped: target se" in adaptive_table(strong)


def test_scripted_adaptive_run_interrupted_is_resumed_from_its_stored_answers(calibrated):
    url, release, fresh = calibrated
    failing = Student(StudentConfig(name="strong", rank=0),
                      ScriptedChatModel.from_source({"replies": [{"error": 400}]}, model_name="failing"))
    with open_session(url) as session:
        parameters = current_parameters(session, release)
        student = knows(fresh, set(TEMPLATES[:3]), "strong")

        def run(who: Student, config: AdaptiveConfig, evaluation_id: str = "adaptive-resume"):
            store = EvaluationStore.open(session, release, evaluation_id, adaptive=True)
            return adaptive_evaluate_release(release, who, parameters, config=config, store=store)

        with pytest.raises(Exception, match="400"):
            run(failing, CONFIG)
        assert list_evaluation_responses(session, evaluation_id="adaptive-resume") == []
        cut = run(student, CONFIG.model_copy(update={"max_items": 2}))  # stopped early: 2 answers stored
        assert cut.stopped == "max_items" and cut.reused_answers == 0
        resumed = run(student, CONFIG)
        uninterrupted = run(student, CONFIG, "adaptive-whole")
        stored = list_evaluation_responses(session, evaluation_id="adaptive-resume")
        assert resumed.reused_answers == 2 and len(stored) == resumed.items_used > 2 and all(r.adaptive for r in stored)
        assert resumed.trajectory == uninterrupted.trajectory
        again = run(failing, CONFIG)  # every answer stored: the failing model is never asked
    assert again.reused_answers == resumed.items_used and again.theta == resumed.theta


def test_release_without_calibration_is_refused_with_the_command_to_run(calibrated):
    _, release, fresh = calibrated
    with pytest.raises(ValueError, match="release calibrate adaptive@1"):
        adaptive_evaluate_release(release, knows(fresh, set(), "none"), {}, config=CONFIG)


def test_cli_evaluate_adaptive_reports_ability_and_items(calibrated, tmp_path: Path):
    url, release, fresh = calibrated
    rules = [{"match": re.escape(render_item(item, TextFormat.plain)), "replies": [f"Answer: {chr(65 + item.answer_index)}"]}
             for template, items in fresh.items() if template in TEMPLATES[:3] for item in items]
    script = tmp_path / "strong.json"
    script.write_text(json.dumps({"rules": rules, "replies": ["Answer: Z"]}))
    out = CliRunner().invoke(app, ["release", "evaluate", "adaptive@1", "--model", f"scripted:{script}", "--adaptive",
                                   "--target-se", "0.5", "--max-items", "12", "--seed", "3", "--json",
                                   "--db", url])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["stopped"] == "target_se" and report["items_used"] < 60 and report["evaluation_id"]
    with open_session(url) as session:
        assert len(list_evaluation_responses(session, evaluation_id=report["evaluation_id"])) == report["items_used"]
