"""Adaptive evaluation through the API: the evaluations route queues an ``evaluate`` job with the
adaptive configuration (its seed fixed when queued), and the job, run with a scripted model on
a calibrated release, returns the adaptive report and stores its answers as adaptive ones; it is
the same operation as the CLI's ``release evaluate --adaptive`` (same seed, same picks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from typer.testing import CliRunner

from itemsmith.api.settings import ApiSettings
from itemsmith.cli.app import app
from itemsmith.items.schema import IRTParameters
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
    open_session,
    record_verdict,
)

from .conftest import OWNER

TEMPLATES = {"exam_trend_direction": -1.0, "feat_seasonality_classify": 0.0, "exam_pure_noise_tf": 1.0}
ADAPTIVE = {"target_se": 0.05, "max_items": 4, "seed": 11}  # the SE target is out of reach: 4 items


@pytest.fixture
def calibrated(engine: Engine) -> tuple[int, list[int]]:
    """A release of three templates with IRT parameters on record."""
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="adaptive", handler="synthetic", owner=OWNER))
        versions = import_curated(session, bank.id, reviewer="curator", template_ids=list(TEMPLATES))
        for version in versions:
            record_verdict(session, version.id, IRTParameters(
                discrimination=2.0, difficulty=TEMPLATES[version.template_key], discrimination_se=0.1,
                difficulty_se=0.1))
        create_release(session, ReleaseCreate(bank="adaptive", seeds=[0], num_samples=2, created_by="curator"))
    return bank.id, [v.id for v in versions]


@pytest.mark.slow
def test_scripted_adaptive_evaluate_job_returns_the_adaptive_report(engine: Engine, api_settings: ApiSettings,
                                                                   calibrated, tmp_path: Path) -> None:
    bank_id, versions = calibrated
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"replies": ["Answer: A"]}))
    request = {"bank": "adaptive", "release": 1, "model": f"scripted:{script}", "adaptive": ADAPTIVE}
    with open_session(engine) as session:
        job_id = create_job(session, kind="evaluate", owner=OWNER, request=request, bank_id=bank_id).id
    assert execute_job(engine, job_id, worker="w1", settings=api_settings) == "succeeded"
    with open_session(engine) as session:
        job = get_job(session, job_id)
        stored = [r for r in list_evaluation_responses(session, version_ids=versions) if r.evaluation_id == job_id]
    result = job.result
    assert result["stopped"] == "max_items" and result["items_used"] == 4 == len(result["trajectory"])
    assert result["se"] == result["trajectory"][-1]["se"] > 0.05 and 0.0 < result["predicted_accuracy"] < 1.0
    assert result["evaluation_id"] == job_id and result["config"]["seed"] == 11
    assert result["release_items"] == 3 * 2 and result["templates_without_irt"] == []
    assert {s["template_id"] for s in result["trajectory"]} <= set(TEMPLATES)
    assert "calibration" in result
    assert len(stored) == 4 and all(r.adaptive for r in stored)

    # the CLI runs the same operation: the same seed picks the same fresh instances
    out = tmp_path / "cli.json"
    cli = CliRunner().invoke(app, ["release", "evaluate", "adaptive@1", "--model", f"scripted:{script}",
                                   "--adaptive", "--max-items", "4", "--target-se", "0.05", "--seed", "11",
                                   "--db", engine.url.render_as_string(hide_password=False), "--out-file", str(out)])
    assert cli.exit_code == 0, cli.output
    from_cli = json.loads(out.read_text())
    steps = [(s["template_id"], s["seed"], s["item_index"], s["correct"]) for s in from_cli["trajectory"]]
    assert steps == [(s["template_id"], s["seed"], s["item_index"], s["correct"]) for s in result["trajectory"]]


def test_adaptive_evaluation_route_queues_the_configuration_with_a_fixed_seed(client, api_key, engine,
                                                                              calibrated, job_runner) -> None:
    with open_session(engine) as session:
        release_id = session.scalars(select(ReleaseRow.id).where(ReleaseRow.bank_id == calibrated[0])).one()
    url, headers = f"/releases/{release_id}/evaluations", {"X-API-Key": api_key}
    drawn = client.post(url, json={"model": "openai:gpt-4o-mini", "adaptive": True, "max_items": 20,
                                   "target_se": 0.25}, headers=headers)
    seeded = client.post(url, json={"model": "openai:gpt-4o-mini", "adaptive": True, "fresh_seed": 5,
                                    "formats": ["csv"]}, headers=headers)
    assert drawn.status_code == seeded.status_code == 202, (drawn.text, seeded.text)
    with open_session(engine) as session:
        first = session.get(JobRow, drawn.json()["id"]).request
        second = session.get(JobRow, seeded.json()["id"]).request
    assert first["adaptive"]["max_items"] == 20 and first["adaptive"]["target_se"] == 0.25
    assert isinstance(first["adaptive"]["seed"], int) and first["fresh_seed"] is None
    assert second["adaptive"]["seed"] == 5 and second["adaptive"]["max_items"] == 50
    assert second["adaptive"]["target_se"] == 0.3 and second["formats"] == ["csv"]
    assert job_runner.dispatched == [drawn.json()["id"], seeded.json()["id"]]


@pytest.mark.parametrize(("body", "message"), [
    ({"max_items": 10}, "only with adaptive"),
    ({"target_se": 0.2}, "only with adaptive"),
    ({"adaptive": True, "formats": ["plain", "csv"]}, "one text format"),
    ({"adaptive": True, "target_se": 0.0}, "target_se"),
    ({"adaptive": True, "max_items": 0}, "max_items"),
])
def test_bad_adaptive_options_get_422_and_queue_nothing(body: dict, message: str, client, api_key, engine,
                                                        calibrated, job_runner) -> None:
    with open_session(engine) as session:
        release_id = session.scalars(select(ReleaseRow.id).where(ReleaseRow.bank_id == calibrated[0])).one()
    response = client.post(f"/releases/{release_id}/evaluations", json={"model": "openai:gpt-4o", **body},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 422 and message in response.text
    assert job_runner.dispatched == []
