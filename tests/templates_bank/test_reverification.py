"""Re-verification of a release with a new judge panel (scripted judges and students that count
their calls): new verdicts beside the old ones, the diff, and the answer cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.cli.app import app
from itemsmith.items.schema import JudgeScore, StudentResponse, Template
from itemsmith.templates_bank.evaluation import EvaluationStore, evaluate_release
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.reverification import CallCounts, reverify_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    ReviewCreate,
    VerdictPublic,
    add_template_version,
    create_bank,
    find_version,
    get_bank,
    list_student_responses,
    list_verdicts,
    open_session,
    record_review,
    record_student_response,
    record_verdict,
    upgrade,
)
from itemsmith.verification.agreement import krippendorff_alpha_interval
from itemsmith.verification.judges import CRITERIA, Judge, JudgeConfig, PanelConfig
from itemsmith.verification.students import PoolConfig, Student, StudentConfig

SOURCE = '''
def question(num_samples):
    items = []
    for _ in range(num_samples):
        values = [float(v) for v in rng.normal(0, 1, 12)]
        items.append(tf_item("{name}: true or false, the last value is above the first one.",
                             values[-1] > values[0], series=[series(values, name="value")],
                             rationale="compare the last value with the first"))
    return items
'''
TEMPLATES = ("ALPHA", "BETA")
SEEDS, SAMPLES = [0, 1], 2
ALL_8 = dict.fromkeys(CRITERIA, 8)
# Old panel: ALPHA fails on specificity (mean 5.5 < 6), BETA passes.
OLD = {"ALPHA": {"old-a": ALL_8, "old-b": dict(ALL_8, specificity=3)},
       "BETA": {"old-a": ALL_8, "old-b": ALL_8}}
# New panel: ALPHA passes everywhere, BETA fails on needs_series (mean 2.5).
NEW = {"new-a": {"ALPHA": ALL_8, "BETA": dict(ALL_8, needs_series=2)},
       "new-b": {"ALPHA": dict.fromkeys(CRITERIA, 7), "BETA": dict(dict.fromkeys(CRITERIA, 7), needs_series=3)}}


def scripted_judge(name: str, table_of: str | None = None, **config: object) -> Judge:
    """A scripted judge replying ``Score: N`` from NEW[table_of] by template and criterion."""
    tables = NEW[table_of or name]
    rules = [{"match": rf"{template}:.*Criterion: {criterion.replace('_', ' ')}\.", "replies": [f"Score: {score}"]}
             for template, table in tables.items() for criterion, score in table.items()]
    model = ScriptedChatModel.from_source({"rules": rules}, model_name=name)
    return Judge(JudgeConfig(name=name, **{"samples": 1, **config}), model)


def new_panel() -> list[Judge]:
    return [scripted_judge("new-a"), scripted_judge("new-b")]


def calls(panel: list[Judge]) -> dict[str, int]:
    return {judge.config.name: judge.model.calls for judge in panel}


def make_release(url: str, bank_name: str = "trends", old_students: bool = False) -> Release:
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name=bank_name, handler="synthetic", owner="tests",
                                               task="trend questions"))
        for name in TEMPLATES:
            template = Template(id=name.lower(), source=SOURCE.replace("{name}", name), title=name, category="trend",
                                handler="synthetic")
            version = add_template_version(session, bank.id, template, created_by="tests")
            record_review(session, version.id, ReviewCreate(decision="approve", reviewer="tests"))
            for judge, table in OLD[name].items():
                for criterion, score in table.items():
                    record_verdict(session, version.id, JudgeScore(judge=judge, criterion=criterion, score=score))
            if old_students:
                for index, correct in enumerate((True, False)):
                    record_student_response(session, version.id, StudentResponse(
                        student="student-1", rank=1, item_index=index, raw="Answer: A", correct=correct),
                        item_hash=f"{index}" * 64)
        return create_release(session, ReleaseCreate(bank=bank_name, seeds=SEEDS, num_samples=SAMPLES,
                                                     created_by="tests"))


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    return url


def verdict_rows(url: str, release: Release) -> dict[str, list[VerdictPublic]]:
    """Every judge and decision verdict on the release's versions, by stage."""
    with open_session(url) as session:
        bank_id = get_bank(session, release.manifest.bank).id
        rows = [v for entry in release.manifest.templates
                for v in list_verdicts(session, find_version(session, bank_id, entry.version).id)]
    return {stage: [v for v in rows if v.stage == stage] for stage in ("judge", "decision")}


def mean_of(tables: dict[str, dict[str, int]], criterion: str) -> float:
    return float(np.mean([table[criterion] for table in tables.values()]))


def new_tables(template: str) -> dict[str, dict[str, int]]:
    return {judge: by_template[template] for judge, by_template in NEW.items()}


def test_scripted_first_run_stores_new_verdicts_beside_the_old_and_reports_the_diff(url: str) -> None:
    release = make_release(url)
    before = verdict_rows(url, release)
    assert len(before["judge"]) == 2 * 2 * len(CRITERIA) and not before["decision"]
    panel = new_panel()
    with open_session(url) as session:
        report = reverify_release(session, release, panel)
    after = verdict_rows(url, release)

    fresh = len(TEMPLATES) * len(panel) * len(CRITERIA)
    assert {v.id for v in before["judge"]} < {v.id for v in after["judge"]}  # the old ones are kept
    added = [v for v in after["judge"] if v.id not in {b.id for b in before["judge"]}]
    assert len(added) == fresh
    assert all(v.run_id == report.run_id and v.model in NEW and v.prompt_hash and v.item_hash for v in added)
    assert [(v.record.stage, v.record.accepted, v.run_id) for v in after["decision"]] == [
        ("judges", True, report.run_id), ("judges", False, report.run_id)]

    assert report.now_rejected == ["beta"] and report.now_accepted == ["alpha"]
    assert [t.change for t in report.templates] == ["now_accepted", "now_rejected"]
    assert "needs_series" in report.templates[1].new_decision.reasons[0]
    assert "specificity" in report.templates[0].old_decision.reasons[0]
    for diff, name in zip(report.templates, TEMPLATES, strict=True):
        for shift in diff.criteria:
            old, new = mean_of(OLD[name], shift.criterion), mean_of(new_tables(name), shift.criterion)
            assert (shift.old_mean, shift.new_mean) == (old, new)
            assert shift.shift == pytest.approx(new - old)
    for shift in report.criteria:
        expected = np.mean([mean_of(new_tables(n), shift.criterion) - mean_of(OLD[n], shift.criterion)
                            for n in TEMPLATES])
        assert shift.shift == pytest.approx(expected)
    matrix = [[mean_of(OLD[n], c) for n in TEMPLATES for c in CRITERIA],
              [mean_of(new_tables(n), c) for n in TEMPLATES for c in CRITERIA]]
    assert report.agreement == pytest.approx(krippendorff_alpha_interval(matrix))
    assert report.judge_calls == CallCounts(calls=fresh, fresh=fresh, cached=0)
    assert sum(calls(panel).values()) == fresh == report.model_calls


def test_scripted_rerun_with_identical_models_makes_zero_model_calls(url: str) -> None:
    release = make_release(url)
    with open_session(url) as session:
        first = reverify_release(session, release, new_panel())
    judged = len(verdict_rows(url, release)["judge"])
    panel = new_panel()  # fresh models, fresh call counters
    with open_session(url) as session:
        again = reverify_release(session, release, panel)

    assert calls(panel) == {"new-a": 0, "new-b": 0}
    assert again.model_calls == 0
    assert again.judge_calls == CallCounts(calls=0, fresh=0, cached=first.judge_calls.fresh)
    assert again.templates == first.templates and again.agreement == first.agreement
    rows = verdict_rows(url, release)
    assert len(rows["judge"]) == judged  # nothing asked, nothing new to store
    assert sorted(v.run_id for v in rows["decision"]) == sorted([first.run_id, again.run_id] * len(TEMPLATES))

    with open_session(url) as session:  # the same run resumed (a re-run job) records no second decision
        reverify_release(session, release, new_panel(), run_id=again.run_id)
    assert len(verdict_rows(url, release)["decision"]) == len(rows["decision"])


def test_scripted_changed_prompt_or_model_misses_the_cache(url: str) -> None:
    release = make_release(url)
    with open_session(url) as session:
        reverify_release(session, release, new_panel())
    per_judge = len(TEMPLATES) * len(CRITERIA)

    panel = new_panel()  # the prompt shows 2 items instead of 3: every prompt differs
    with open_session(url) as session:
        report = reverify_release(session, release, panel, panel_config=PanelConfig(items_per_prompt=2))
    assert calls(panel) == {"new-a": per_judge, "new-b": per_judge} and report.judge_calls.cached == 0

    panel = [scripted_judge("new-a"), scripted_judge("new-c", table_of="new-b")]  # another model
    with open_session(url) as session:
        report = reverify_release(session, release, panel)
    assert calls(panel) == {"new-a": 0, "new-c": per_judge}
    assert report.judge_calls == CallCounts(calls=per_judge, fresh=per_judge, cached=per_judge)

    panel = [scripted_judge("new-a", samples=2)]  # the same model, scored another way
    with open_session(url) as session:
        reverify_release(session, release, panel)
    assert calls(panel) == {"new-a": 2 * per_judge}


def test_scripted_cached_answers_from_another_bank_are_stored_on_this_one(url: str) -> None:
    first, copy = make_release(url), make_release(url, bank_name="copy")
    with open_session(url) as session:
        reverify_release(session, first, new_panel())
    panel = new_panel()
    with open_session(url) as session:
        report = reverify_release(session, copy, panel)
    assert calls(panel) == {"new-a": 0, "new-b": 0}
    stored = [v for v in verdict_rows(url, copy)["judge"] if v.run_id == report.run_id]
    assert len(stored) == report.judge_calls.cached == len(TEMPLATES) * 2 * len(CRITERIA)


def test_scripted_students_are_cached_and_their_accuracy_compared(url: str) -> None:
    release = make_release(url, old_students=True)
    keyed_a: dict[str, list[bool]] = {}
    for entry, run in release.items():
        keyed_a.setdefault(entry.template_id, []).extend(item.answer_index == 0 for item in run.items)
    n_items = len(SEEDS) * SAMPLES

    def pool() -> list[Student]:
        model = ScriptedChatModel.from_source(["The series rises.\nAnswer: A"], model_name="student-1")
        return [Student(StudentConfig(name="student-1", rank=1), model)]

    students = pool()
    with open_session(url) as session:
        report = reverify_release(session, release, new_panel(), students=students,
                                  pool_config=PoolConfig(blind=False))
    assert students[0].model.calls == report.student_calls.calls == len(TEMPLATES) * n_items
    for diff in report.templates:
        (shift,) = diff.students
        assert shift.student == "student-1" and shift.old_accuracy == 0.5 and shift.n_items == n_items
        assert shift.new_accuracy == pytest.approx(np.mean(keyed_a[diff.template_id]))
    with open_session(url) as session:
        stored = list_student_responses(session, model="student-1")
    assert len(stored) == 2 * 2 + len(TEMPLATES) * n_items

    students = pool()
    with open_session(url) as session:
        again = reverify_release(session, release, new_panel(), students=students,
                                 pool_config=PoolConfig(blind=False))
    assert students[0].model.calls == 0 and again.model_calls == 0
    assert again.student_calls == CallCounts(calls=0, fresh=0, cached=len(TEMPLATES) * n_items)
    assert [t.students for t in again.templates] == [t.students for t in report.templates]


def test_scripted_student_evaluated_on_the_release_answers_from_its_evaluation_never_blind(url: str) -> None:
    release = make_release(url)

    def student(rank: int) -> Student:
        model = ScriptedChatModel.from_source(["The series rises.\nAnswer: A"], model_name="student-1")
        return Student(StudentConfig(name="student-1", rank=rank), model)

    with open_session(url) as session:
        store = EvaluationStore.open(session, release, "eval-1")
    evaluated = evaluate_release(release, student(0), store=store)
    accuracy = {t: float(np.mean([r.correct for r in evaluated.responses if r.template_id == t]))
                for t in ("alpha", "beta")}
    pool = [student(1)]
    with open_session(url) as session:
        report = reverify_release(session, release, new_panel(), students=pool)  # the default pool: no blind
    n_items = len(SEEDS) * SAMPLES
    assert pool[0].model.calls == 0
    assert report.student_calls == CallCounts(calls=0, fresh=0, cached=len(TEMPLATES) * n_items)
    assert {d.template_id: d.students[0].new_accuracy for d in report.templates} == accuracy
    with open_session(url) as session:  # the answers stay where they are: nothing is copied
        assert list_student_responses(session, model="student-1") == []


def test_bad_panels_are_refused_before_anything_runs(url: str) -> None:
    release = make_release(url)
    with open_session(url) as session:
        with pytest.raises(ValueError, match="no judges"):
            reverify_release(session, release, [])
        with pytest.raises(ValueError, match="unique"):
            reverify_release(session, release, [scripted_judge("new-a"), scripted_judge("new-a")])
        with pytest.raises(ValueError, match="at most 200"):
            reverify_release(session, release, [scripted_judge("new-a"), scripted_judge("x" * 201, "new-b")])
    assert len(verdict_rows(url, release)["judge"]) == 2 * 2 * len(CRITERIA)


def test_scripted_reverify_from_the_command_line(url: str, tmp_path: Path) -> None:
    make_release(url)
    script = tmp_path / "judge.json"
    rules = [{"match": r"BETA:.*Criterion: needs series\.", "replies": ["Score: 2"]}]
    script.write_text(json.dumps({"rules": rules, "replies": ["Fine.\nScore: 8"]}))
    runner = CliRunner()
    args = ["release", "reverify", "trends@1", "--judge", f"scripted:{script}", "--db", url]

    first = runner.invoke(app, [*args, "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    samples = JudgeConfig(name="x").samples
    assert report["judge_calls"] == {"calls": len(TEMPLATES) * len(CRITERIA) * samples,
                                     "fresh": len(TEMPLATES) * len(CRITERIA), "cached": 0}
    assert report["now_rejected"] == ["beta"] and report["now_accepted"] == ["alpha"]

    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "now rejected" in again.output and "now accepted" in again.output
    assert f"judges: 0 model calls, 0 scores drawn, {len(TEMPLATES) * len(CRITERIA)} reused" in again.output

    bad = runner.invoke(app, [*args, "--student", "scripted:x.json"])
    assert bad.exit_code == 2 and "SPEC@RANK" in bad.output


def test_scripted_judge_whose_calls_fail_leaves_reverify_without_a_verdict_exit_3(url: str, tmp_path: Path) -> None:
    make_release(url)
    script = tmp_path / "refusing.json"
    script.write_text(json.dumps({"replies": [{"error": 400}]}))  # a permanent error: sent once, never an answer
    result = CliRunner().invoke(app, ["release", "reverify", "trends@1", "--judge", f"scripted:{script}", "--db", url,
                                      "--json"])
    assert result.exit_code == 3, result.output
    report = json.loads(result.output)
    assert sorted(report["errored"]) == ["alpha", "beta"] and report["now_rejected"] == []
