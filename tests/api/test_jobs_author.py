"""Authoring and re-check jobs with scripted models and the real sandbox (synthetic handler):
accepted templates stored with their verdicts, reruns that store nothing twice, cancel and
resume, the in-process runner handing jobs over, progress, failures."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, update

from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.api.settings import ApiSettings
from itemsmith.items.hashing import item_hash
from itemsmith.items.schema import (
    CapabilityVerdict,
    Decision,
    Item,
    Provenance,
    RunStatus,
    StructureReport,
    StudentResponse,
    Template,
    content_hash,
)
from itemsmith.service.jobs import (
    AuthorProgress,
    InProcessRunner,
    JobPublic,
    cancel_job,
    execute_job,
    get_job,
    list_events,
    submit_job,
)
from itemsmith.service.jobs._store import create_job, requeue_job
from itemsmith.service.jobs._verdicts import record_verification
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.storage import (
    BankCreate,
    TemplateVersionPublic,
    add_template_version,
    create_bank,
    list_student_responses,
    list_verdicts,
    list_versions,
    open_session,
    utcnow,
)
from itemsmith.verification.capability import CapabilityReport, Outcome
from itemsmith.verification.students import StudentReport

from ..support import wait_until
from ..template_sources import WINDOW_MEAN
from .conftest import AUTHOR_TEMPLATES, AuthorScripts


@pytest.fixture
def settings(api_settings: ApiSettings) -> ApiSettings:
    return api_settings.model_copy(update={"job_lease_s": 5.0})


@pytest.fixture
def bank_id(engine: Engine) -> int:
    with open_session(engine) as session:
        return create_bank(session, BankCreate(name="jobs-bank", handler="synthetic", task="trends", owner="alice")).id


def _queue(engine: Engine, kind: str, request: dict, bank_id: int) -> str:
    with open_session(engine) as session:
        return create_job(session, kind=kind, owner="alice", request=request, bank_id=bank_id).id


def _job(engine: Engine, job_id: str) -> JobPublic:
    with open_session(engine) as session:
        return get_job(session, job_id)


def _crash(engine: Engine, job_id: str) -> None:
    """As if the job's worker died just before it reported the outcome: running, lease expired."""
    with open_session(engine) as session:
        session.execute(update(JobRow).where(JobRow.id == job_id).values(
            status="running", result=None, lease_until=utcnow() - timedelta(seconds=1)))


def _bank_state(engine: Engine, bank_id: int) -> dict[str, list[tuple[str, str | None]]]:
    """Per stored version (by content hash): its verdicts' stages and run ids."""
    with open_session(engine) as session:
        return {v.content_hash: [(x.stage, x.run_id) for x in list_verdicts(session, v.id)]
                for v in list_versions(session, bank_id)}


def expected_hashes(titles: tuple[str, ...]) -> set[str]:
    return {content_hash(get_curated(AUTHOR_TEMPLATES[t]).source) for t in titles}


def judge_spec(tmp_path: Path) -> str:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"replies": ["Clear, specific and answerable from the series.\nScore: 9"]}))
    return f"scripted:{path}"


@pytest.mark.slow
def test_scripted_author_job_stores_accepted_templates_and_a_rerun_stores_nothing_twice(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts, tmp_path: Path) -> None:
    scripts: AuthorScripts = author_scripts(("First", "Second"))
    job_id = _queue(engine, "author", scripts.request(bank_id, judges=[judge_spec(tmp_path)]), bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"

    job = _job(engine, job_id)
    state = _bank_state(engine, bank_id)
    assert set(state) == expected_hashes(scripts.titles)
    for stages in state.values():  # one structure report, the audit, a score per criterion of the one judge, the decision
        assert sorted(stage for stage, _ in stages) == ["audit", "decision", "judge", "judge", "judge", "judge",
                                                        "judge", "structure"]
        assert {run_id for _, run_id in stages} == {job_id}
    assert job.progress["accepted"] == 2 and job.progress["stored"] == 2 and job.progress["in_flight"] == 0
    assert job.progress["rejected_by_stage"] == {"structure": 1}  # Second's first reply failed in the sandbox
    assert job.progress["input_tokens"] > 0 and job.progress["output_tokens"] > 0
    assert {t["content_hash"] for t in job.result["templates"]} == set(state)
    assert job.result["summary"]["accepted"] == 2
    # diversity: of the stored versions' items, and (the run report's) of the items the content stages saw
    assert job.result["diversity"]["templates"] == job.result["summary"]["diversity"]["templates"] == 2
    with open_session(engine) as session:
        events = list_events(session, job_id)
        versions = list_versions(session, bank_id)
        structure = list_verdicts(session, versions[0].id, "structure")[0].record
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert sum(e.kind == "template" for e in events) == 2 and events[-1].payload == {"status": "succeeded",
                                                                                     "error": None}
    assert structure.status is RunStatus.ok and len(structure.items) == 3
    assert all(v.provenance.generator == scripts.generator for v in versions)

    _crash(engine, job_id)
    assert execute_job(engine, job_id, worker="w2", settings=settings) == "succeeded"
    again = _job(engine, job_id)
    assert again.attempts == 2 and _bank_state(engine, bank_id) == state
    with open_session(engine) as session:
        assert sum(e.kind == "template" for e in list_events(session, job_id)) == 2
    assert again.progress["stored"] == 2 and again.progress["rejected_by_stage"] == {"structure": 1}


@pytest.mark.slow
def test_scripted_author_job_cancelled_mid_run_keeps_accepted_templates_and_resumes(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts) -> None:
    scripts: AuthorScripts = author_scripts(("First", "Second", "Third"), latency_s=1.0)
    job_id = _queue(engine, "author", scripts.request(bank_id), bank_id)
    outcome: list[str | None] = []
    thread = threading.Thread(target=lambda: outcome.append(
        execute_job(engine, job_id, worker="w1", settings=settings)))
    thread.start()
    wait_until(lambda: _job(engine, job_id).progress.get("accepted", 0) >= 1, "the first accepted template", 120,
               interval_s=0.1)
    with open_session(engine) as session:
        assert cancel_job(session, job_id, "alice").cancel_requested
    thread.join(timeout=60)
    assert outcome == ["cancelled"]
    cancelled = _job(engine, job_id)
    assert cancelled.status == "cancelled" and cancelled.progress["accepted"] < 3
    kept = _bank_state(engine, bank_id)
    assert content_hash(get_curated(AUTHOR_TEMPLATES["First"]).source) in kept

    with open_session(engine) as session:
        requeue_job(session, job_id, "alice")
    assert execute_job(engine, job_id, worker="w2", settings=settings) == "succeeded"
    state = _bank_state(engine, bank_id)
    assert set(state) == expected_hashes(scripts.titles)
    assert all(sorted(s for s, _ in stages) == ["audit", "decision", "structure"] for stages in state.values())
    job = _job(engine, job_id)
    assert job.attempts == 2 and job.progress["accepted"] == 3 and job.progress["stored"] == 3
    with open_session(engine) as session:
        kinds = [e.kind for e in list_events(session, job_id)]
    assert "cancel_requested" in kinds and kinds.count("template") == 3


@pytest.mark.slow
def test_inprocess_runner_hands_running_jobs_back_on_stop_and_the_next_one_finishes_them(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts) -> None:
    scripts: AuthorScripts = author_scripts(("First", "Second"), latency_s=1.0)
    first = InProcessRunner(engine, settings)
    first.start()
    job = submit_job(engine, kind="author", owner="alice", request=scripts.request(bank_id), bank_id=bank_id,
                     runner=first)
    wait_until(lambda: _job(engine, job.id).progress.get("accepted", 0) >= 1, "the first accepted template", 120,
               interval_s=0.1)
    first.stop()
    assert _job(engine, job.id).status == "queued"  # handed back, not failed

    second = InProcessRunner(engine, settings)
    second.start()  # takes over every job left queued
    try:
        wait_until(lambda: _job(engine, job.id).status == "succeeded", "the job to succeed", 120, interval_s=0.1)
    finally:
        second.stop()
    assert _job(engine, job.id).attempts == 2
    assert set(_bank_state(engine, bank_id)) == expected_hashes(scripts.titles)


def test_author_job_with_a_missing_script_fails_with_the_reason(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts, tmp_path: Path) -> None:
    scripts: AuthorScripts = author_scripts(("First",))
    request = scripts.request(bank_id, generator=f"scripted:{tmp_path / 'missing.json'}")
    job_id = _queue(engine, "author", request, bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "failed"
    job = _job(engine, job_id)
    assert job.status == "failed" and "no script file" in job.error and job.result is None
    assert _bank_state(engine, bank_id) == {}


@pytest.mark.slow
def test_recheck_job_stores_its_verdicts_once(engine: Engine, settings: ApiSettings, bank_id: int) -> None:
    good = get_curated("feat_trend_classify").source  # passes the item audit
    with open_session(engine) as session:
        versions = [add_template_version(session, bank_id, Template(
            id=key, source=source, title=key, category="trend", handler="synthetic",
            provenance=Provenance(origin="user")), created_by="alice")
            for key, source in (("edited", good), ("broken", "def question(num_samples):\n    return 1 / 0\n"))]
    outcomes = {}
    for version in versions:
        job_id = _queue(engine, "recheck", {"version_id": version.id, "num_samples": 3}, bank_id)
        assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
        outcomes[version.template_key] = (job_id, _job(engine, job_id).result)
    job_id, result = outcomes["edited"]
    assert result["structure"] == "ok" and result["decision"]["accepted"], result
    assert result["audit"].startswith("audit passed")
    _, broken = outcomes["broken"]
    assert broken["structure"] == "error" and "ZeroDivisionError" in broken["error"]
    assert broken["decision"]["accepted"] is False and broken["decision"]["stage"] == "structure"

    before = _bank_state(engine, bank_id)
    _crash(engine, job_id)
    assert execute_job(engine, job_id, worker="w2", settings=settings) == "succeeded"
    assert _bank_state(engine, bank_id) == before
    assert _job(engine, job_id).result == result
    assert sorted(s for s, _ in before[content_hash(good)]) == ["audit", "decision", "structure"]


def test_recheck_of_a_version_of_another_bank_fails(engine: Engine, settings: ApiSettings, bank_id: int) -> None:
    with open_session(engine) as session:
        other = create_bank(session, BankCreate(name="other-bank", handler="synthetic", owner="alice"))
        version = add_template_version(session, other.id, Template(
            id="t", source="def question(num_samples):\n    return []\n", title="t", category="trend"),
            created_by="alice")
    job_id = _queue(engine, "recheck", {"version_id": version.id}, bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "failed"
    assert "no template version" in _job(engine, job_id).error


def test_verification_verdicts_key_student_responses_by_the_item_they_answered(engine: Engine, bank_id: int) -> None:
    items = [Item(question=f"Q{i}?", options=["a", "b"], answer_index=i % 2) for i in range(2)]
    structure = StructureReport(status=RunStatus.ok, items=items)
    responses = [StudentResponse(student="s1", rank=1, item_index=i, raw="Answer: A", choice=0, correct=i == 0)
                 for i in range(2)]
    decision = Decision(accepted=True, stage="students")
    result = VerificationResult(
        decision=decision, students=StudentReport(template_id="t", responses=responses, chance=0.5, n_items=2),
        capability=CapabilityReport(template_id="t", outcome=Outcome.all_poor, n_items=2, chance=0.5,
                                    decision=decision, verdict=CapabilityVerdict(accuracies={"s1": 0.5})))
    with open_session(engine) as session:
        version = add_template_version(session, bank_id, Template(id="t", source="x = 1", title="t", category="c"),
                                       created_by="alice")
        assert record_verification(session, version.id, structure=structure, results=[result], decision=decision,
                                   run_id="job1")
        assert not record_verification(session, version.id, structure=structure, results=[result],
                                       decision=decision, run_id="job1")
        stored = list_student_responses(session, version.id)
        stages = [v.stage for v in list_verdicts(session, version.id)]
    assert [r.item_hash for r in stored] == [item_hash(item) for item in items]
    assert stages == ["structure", "capability", "decision"]


def test_progress_counts_rejections_by_stage_and_survives_a_replay() -> None:
    def event(slot: int, phase: str, tokens: int = 0) -> SlotEvent:
        return SlotEvent(slot=slot, title=f"t{slot}", phase=phase, input_tokens=tokens, output_tokens=tokens,
                         cost_usd=0.01 * tokens)

    events = [event(0, "queued"), event(1, "queued"), event(0, "generating"), event(0, "checking", 10),
              event(0, "refining", 10), event(0, "checking", 20), event(0, "verifying", 20),
              event(0, "discarded", 20), event(1, "generating"), event(1, "checking", 5)]
    progress = AuthorProgress()
    for e in events:
        progress.apply(e)
    summary = progress.summary()
    assert summary["rejected_by_stage"] == {"structure": 1, "verification": 1}
    assert (summary["discarded"], summary["in_flight"], summary["in_flight_titles"]) == (1, 1, ["t1"])
    assert (summary["input_tokens"], summary["cost_usd"]) == (25, 0.25)
    # a resumed run announces its unfinished slot again, with no usage: nothing is counted twice or lost
    for e in [event(0, "discarded", 20), event(1, "queued")]:
        progress.apply(e)
    assert progress.summary()["rejected_by_stage"] == summary["rejected_by_stage"]
    assert progress.summary()["input_tokens"] == 25 and progress.summary()["queued"] == 1


def test_author_job_whose_every_generator_call_fails_ends_failed_with_the_reason(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts, tmp_path: Path) -> None:
    """No slot produced anything and every call failed: the job is ``failed`` (not ``succeeded``
    with nothing), and its error says why."""
    scripts: AuthorScripts = author_scripts(("First", "Second"))
    failing = tmp_path / "failing-generator.json"
    failing.write_text(json.dumps({"replies": [{"error": 400}]}))  # a permanent provider error on every call
    request = scripts.request(bank_id, generator=f"scripted:{failing}", planner=scripts.planner)
    job_id = _queue(engine, "author", request, bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "failed"
    job = _job(engine, job_id)
    assert job.status == "failed" and job.result is None
    assert "all 2 template slots failed" in job.error and "HTTP 400" in job.error
    assert _bank_state(engine, bank_id) == {}


def test_author_job_result_names_the_handler_by_name_and_hash(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts) -> None:
    scripts: AuthorScripts = author_scripts(("First",))
    job_id = _queue(engine, "author", scripts.request(bank_id), bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
    assert _job(engine, job_id).result["summary"]["handler"]["name"] == "synthetic"


@pytest.mark.parametrize("restart_broken", [None, True])
def test_author_job_request_sets_whether_code_that_did_not_run_restarts(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts, restart_broken: bool | None) -> None:
    """Second's first reply fails in the sandbox: with `restart_broken` its next round starts afresh
    (the default for a scripted generator is to refine it)."""
    scripts: AuthorScripts = author_scripts(("Second",))
    job_id = _queue(engine, "author", scripts.request(bank_id, restart_broken=restart_broken), bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
    summary = _job(engine, job_id).result["summary"]
    assert summary["accepted"] == 1 and summary["restarted_rounds"] == (1 if restart_broken else 0)


def test_scripted_author_job_runs_the_default_panel_and_reports_its_stages(
        engine: Engine, settings: ApiSettings, bank_id: int, author_scripts, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Judges unset: the server's default panel runs; students []: no pool. The stages are the
    job's first event and part of its result."""
    judge = judge_spec(tmp_path)
    monkeypatch.setenv("ITEMSMITH_DEFAULT_JUDGES", json.dumps([judge]))
    scripts: AuthorScripts = author_scripts(("First",))
    job_id = _queue(engine, "author", scripts.request(bank_id, students=[]), bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
    result = _job(engine, job_id).result
    stages = {s["name"]: s for s in result["stages"]}
    assert [s["name"] for s in result["stages"]] == ["structure", "audit", "rederivation", "judges", "students",
                                                     "capability"]
    assert stages["judges"]["status"] == "on" and stages["judges"]["models"] == [judge]
    assert stages["students"]["status"] == "off" and stages["students"]["reason"].startswith("turned off")
    assert "calibration" not in result  # no student pool answered
    assert result["summary"]["verification"]["acceptance_by_stage"]["judges"]["checked"] == 1
    with open_session(engine) as session:
        events = list_events(session, job_id)
    first = next(e for e in events if e.kind != "status")  # before any slot's progress
    assert first.kind == "stages" and first.payload == {"stages": result["stages"]}


def _window_mean_with_solver(engine: Engine, bank_id: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             script: dict) -> tuple[Path, TemplateVersionPublic]:
    """WINDOW_MEAN stored in the bank, and the re-derivation on with a scripted solver of `script`."""
    solver = tmp_path / "solver.json"
    solver.write_text(json.dumps(script))
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_ENABLED", "true")
    monkeypatch.setenv("ITEMSMITH_SOLVER", f"scripted:{solver}")
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_LARGE_SIZE", "30")
    with open_session(engine) as session:
        version = add_template_version(session, bank_id, Template(
            id="mean", source=WINDOW_MEAN, title="mean", category="stats", handler="synthetic",
            provenance=Provenance(origin="user")), created_by="alice")
    return solver, version


def test_scripted_recheck_stores_the_solver_program_and_reuses_it(engine: Engine, settings: ApiSettings,
                                                                   bank_id: int, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    solver, version = _window_mean_with_solver(engine, bank_id, tmp_path, monkeypatch, {"exhausted": "error", "replies": [
        "```python\ndef solve(item):\n    values = item['series'][0]['values']\n    return sum(values) / len(values)\n```"]})
    reports = []
    for _ in range(2):  # the second recheck finds the stored program: the exhausted script is never asked
        job_id = _queue(engine, "recheck", {"version_id": version.id, "num_samples": 3}, bank_id)
        assert execute_job(engine, job_id, worker="w1", settings=settings) == "succeeded"
        assert _job(engine, job_id).result["decision"]["accepted"], _job(engine, job_id).result
        with open_session(engine) as session:
            stored = [v for v in list_verdicts(session, version.id, "rederivation") if v.run_id == job_id]
        assert len(stored) == 1 and stored[0].model == f"scripted:{solver}"
        reports.append(stored[0].payload)
    assert reports[0]["status"] == "agrees" and not reports[0]["reused"] and reports[0]["tries"] == 1
    assert reports[1]["status"] == "agrees" and reports[1]["reused"] and reports[1]["program"] == reports[0]["program"]
    assert reports[1]["seeds"] != reports[0]["seeds"]  # run again on fresh draws


def test_scripted_recheck_whose_solver_call_fails_stores_no_verdict(engine: Engine, settings: ApiSettings,
                                                                     bank_id: int, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # a permanent error: no reply, no verdict
    solver, version = _window_mean_with_solver(engine, bank_id, tmp_path, monkeypatch, {"replies": [{"error": 400}]})
    job_id = _queue(engine, "recheck", {"version_id": version.id, "num_samples": 3}, bank_id)
    assert execute_job(engine, job_id, worker="w1", settings=settings) == "failed"
    job = _job(engine, job_id)
    assert "no verdict: the rederivation stage" in job.error and "400" in job.error
    with open_session(engine) as session:
        assert [v for v in list_verdicts(session, version.id) if v.run_id == job_id] == []  # no rejection stored
