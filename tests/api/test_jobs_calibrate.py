"""The ``calibrate`` job and its route, and the ``evaluate`` job storing its answers for it: scripted
models of known answers evaluated by jobs become the respondents a calibration job fits; too few
respondents fail the job with the count needed; ``priors`` fits anyway."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import execute_job, get_job
from itemsmith.service.jobs._store import create_job
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.releases import ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    ReleaseRow,
    create_bank,
    import_curated,
    list_evaluation_responses,
    list_verdicts,
    open_session,
)

from .conftest import OWNER

TEMPLATES = ["exam_trend_direction", "feat_seasonality_classify"]


def _run(engine: Engine, settings: ApiSettings, kind: str, request: dict, bank_id: int) -> tuple[str, object]:
    with open_session(engine) as session:
        job_id = create_job(session, kind=kind, owner=OWNER, request=request, bank_id=bank_id).id
    status = execute_job(engine, job_id, worker="w1", settings=settings)
    with open_session(engine) as session:
        job = get_job(session, job_id)
    return status, job


@pytest.fixture
def released(engine: Engine) -> tuple[int, list[int]]:
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="calib", handler="synthetic", owner=OWNER))
        versions = import_curated(session, bank.id, reviewer="curator", template_ids=TEMPLATES)
        create_release(session, ReleaseCreate(bank="calib", seeds=[0], num_samples=4, created_by="curator"))
    return bank.id, [v.id for v in versions]


def _evaluate_scripted(engine: Engine, settings: ApiSettings, bank_id: int, path: Path, letter: str) -> dict:
    path.write_text(json.dumps({"replies": [f"Answer: {letter}"]}))
    status, job = _run(engine, settings, "evaluate", {"bank": "calib", "release": 1, "model": f"scripted:{path}"},
                       bank_id)
    assert status == "succeeded", job.error
    return job.result


@pytest.mark.slow
def test_scripted_evaluate_jobs_store_answers_and_a_calibrate_job_fits_them(engine: Engine, api_settings: ApiSettings,
                                                                           released, tmp_path: Path) -> None:
    bank_id, versions = released
    results = [_evaluate_scripted(engine, api_settings, bank_id, tmp_path / f"m{i}.json", letter)
               for i, letter in enumerate("ABCDA")]
    with open_session(engine) as session:
        stored = list_evaluation_responses(session, version_ids=versions)
    assert len(stored) == 5 * 8 and {r.evaluation_id for r in stored} == {r["evaluation_id"] for r in results}
    # the first four respondents were too few to recalibrate; the fifth made five
    assert "not recalibrated" in results[0]["calibration"]["refreshed"]
    assert "calibration_id" in results[4]["calibration"]
    status, job = _run(engine, api_settings, "calibrate", {"bank": "calib", "release": 1}, bank_id)
    assert status == "succeeded", job.error
    assert job.result["calibration_id"] == job.id and len(job.result["respondents"]) == 5
    with open_session(engine) as session:
        irt = [list_verdicts(session, v, "irt") for v in versions]
    assert all(v and v[-1].run_id == job.id for v in irt)


def test_calibrate_job_with_too_few_respondents_fails_with_the_count_and_priors_fit(
        engine: Engine, api_settings: ApiSettings, released, tmp_path: Path) -> None:
    bank_id, versions = released
    for i, letter in enumerate("AB"):
        _evaluate_scripted(engine, api_settings, bank_id, tmp_path / f"few{i}.json", letter)
    status, job = _run(engine, api_settings, "calibrate", {"bank": "calib", "release": 1}, bank_id)
    assert status == "failed" and "2 respondent(s)" in job.error and "at least 5" in job.error
    status, job = _run(engine, api_settings, "calibrate", {"bank": "calib", "release": 1, "priors": True}, bank_id)
    assert status == "succeeded" and job.result["below_minimum"] is True


def test_calibration_route_queues_a_calibrate_job_listed_with_its_release(client, api_key, engine, seeded,
                                                                          job_runner) -> None:
    with open_session(engine) as session:
        create_release(session, ReleaseCreate(bank=seeded.bank.name, seeds=[0], num_samples=2, created_by="curator"))
        release = {"id": session.scalars(select(ReleaseRow.id).where(ReleaseRow.bank_id == seeded.bank.id)).one()}
    response = client.post(f"/releases/{release['id']}/calibrations", json={"priors": True, "min_respondents": 3},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["kind"] == "calibrate" and job_runner.dispatched == [job["id"]]
    with open_session(engine) as session:
        assert session.get(JobRow, job["id"]).request == {"bank": seeded.bank.name, "release": 1, "priors": True,
                                                          "min_respondents": 3}
    listed = client.get(f"/releases/{release['id']}/calibrations", headers={"X-API-Key": api_key}).json()
    assert [j["id"] for j in listed] == [job["id"]]
    bad = client.post(f"/releases/{release['id']}/calibrations", json={"min_respondents": 1},
                      headers={"X-API-Key": api_key})
    assert bad.status_code == 422
