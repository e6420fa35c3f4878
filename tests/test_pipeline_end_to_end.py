"""The whole pipeline through its entry points only, the command line and the REST API mixed as a
user would, with scripted models of known strength:

author with a student pool (CLI) -> bank (CLI) -> release (API job) -> evaluate three models (two
API jobs, one CLI run) -> calibrate (CLI; too few respondents first, then on the priors) ->
adaptive evaluation (CLI) -> re-verify with a new judge (API job) -> a model that fails half way
(CLI and API), resumed.

A model's strength is known: it answers every item of the release and of the adaptive runs from a
rule written for that item, right with a probability that rises with its strength (falls, on the
deliberately mis-keyed template); items nobody could foresee (the authoring pool's review items,
drawn on a fresh OS seed) it does not answer: the three models alike, so the ability order holds.
The student pool is the three evaluated models, so the re-verification finds every answer it
needs among the evaluations'.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.cli.app import app as cli_app
from itemsmith.items.hashing import item_hash
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import Item
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.evaluation import fresh_seeds
from itemsmith.templates_bank.regeneration import TemplateRun, regenerate
from itemsmith.templates_bank.storage import (
    StudentResponseRow,
    get_bank,
    list_evaluation_responses,
    list_verdicts,
    list_versions,
    open_session,
)

OWNER = "alice"
# authored through the scripted generator (each title's reply is a curated source that passes the
# item audit) and curated templates imported beside them; one of those is mis-keyed for the models
AUTHORED = {"First": "feat_trend_classify", "Second": "feat_extreme_date"}
CURATED = ["exam_trend_direction", "feat_seasonality_classify", "exam_pure_noise_tf"]
MIS_KEYED = "exam_pure_noise_tf"
SEEDS, SAMPLES = (0,), 4
ITEMS = (len(AUTHORED) + len(CURATED)) * len(SEEDS) * SAMPLES
STRENGTH = {"strong": 1.5, "medium": 0.0, "weak": -1.5}
ADAPTIVE_SEED, ADAPTIVE_ITEMS = 5, 8
FAIL_AFTER = 16  # the failing model's good replies, then errors


def p_correct(strength: float, template: str) -> float:
    slope = -3.0 if template == MIS_KEYED else 3.0  # on the mis-keyed template the weak beat the strong
    return float(1 / (1 + np.exp(-slope * strength)))


def known_items() -> dict[str, list[Item]]:
    """Every item the release and the adaptive runs will show, by template (curated name)."""
    sources = {name: get_curated(name).source for name in [*AUTHORED.values(), *CURATED]}
    seeds = (*SEEDS, *fresh_seeds(set(SEEDS), ADAPTIVE_ITEMS, ADAPTIVE_SEED))
    runs = [TemplateRun(name, source, "synthetic", seeds, SAMPLES) for name, source in sources.items()]
    items: dict[str, list[Item]] = {}
    for run in regenerate(runs):
        items.setdefault(run.run.template_id, []).extend(run.items)
    return items


def model_script(name: str, strength: float, items: dict[str, list[Item]]) -> dict[str, Any]:
    """One rule per known item, right or wrong by a fixed draw; anything else is not answered."""
    rules = []
    for template, template_items in items.items():
        for item in template_items:
            draw = int.from_bytes(hashlib.sha256(f"{name}:{item_hash(item)}".encode()).digest()[:8], "big") / 2**64
            right = draw < p_correct(strength, template)
            letter = item.answer_index if right else (item.answer_index + 1) % len(item.options)
            rules.append({"match": re.escape(render_item(item, TextFormat.plain)),
                          "replies": [f"Answer: {chr(65 + letter)}"]})
    return {"rules": rules, "replies": ["I cannot tell."]}


def authoring_scripts() -> dict[str, dict[str, Any]]:
    plan = [{"title": t, "category": "patterns", "concept": "patterns", "kind": "mc",
             "question": f"{t}: what is asked about <record>?", "answer_from": "the series", "columns": []}
            for t in AUTHORED]
    rules = [{"match": f"Title: {title}\\b", "replies": [f"```python\n{get_curated(name).source}```\n"]}
             for title, name in AUTHORED.items()]
    return {"planner": {"replies": [json.dumps(plan)]}, "generator": {"rules": rules},
            "judge": {"replies": ["Clear and answerable from the series.\nScore: 8"]},
            "new_judge": {"replies": ["Well posed; the series decides it.\nScore: 9"]},
            "failing": {"replies": [*["Answer: A"] * FAIL_AFTER, {"error": 400}]}}


def write_scripts(folder: Path, contents: dict[str, dict[str, Any]]) -> dict[str, str]:
    for name, content in contents.items():
        (folder / f"{name}.json").write_text(json.dumps(content))
    return {name: f"scripted:{name}.json" for name in contents}


@pytest.fixture
def scripts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The scripts folder (the API reads scripted models only from there; the command line too, so
    both name a model by the same spec) with the authoring and the failing models; their specs."""
    folder = tmp_path / "scripts"
    folder.mkdir()
    monkeypatch.setenv("ITEMSMITH_SCRIPTED_DIR", str(folder))
    monkeypatch.setenv("ITEMSMITH_API_MODEL_PROVIDERS", '["scripted"]')
    monkeypatch.setenv("ITEMSMITH_BACKOFF_INITIAL_S", "0.01")
    monkeypatch.setenv("ITEMSMITH_BACKOFF_MAX_S", "0.05")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_OPENAI_API_KEY", "ITEMSMITH_ANTHROPIC_API_KEY",
                "ITEMSMITH_GENERATOR", "ITEMSMITH_PLANNER"):
        monkeypatch.delenv(var, raising=False)
    return write_scripts(folder, authoring_scripts())


@pytest.fixture
def models(scripts: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """`scripts` and the models of known strength."""
    items = known_items()
    strengths = {name: model_script(name, strength, items) for name, strength in STRENGTH.items()}
    return {**scripts, **write_scripts(tmp_path / "scripts", strengths)}


class Cli:
    """`itemsmith ...` on the test's bank."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.runner = CliRunner(env={"COLUMNS": "400"})

    def __call__(self, *args: str, code: int = 0) -> Any:
        result = self.runner.invoke(cli_app, [*args, "--db", self.database_url])
        assert result.exit_code == code, result.output
        return result


class Api:
    """The REST API with its in-process job runner; `wait` follows a job's event stream to its end."""

    def __init__(self, client: TestClient, key: str) -> None:
        self.client = client
        self.headers = {"X-API-Key": key}

    def post(self, path: str, body: dict[str, Any] | None = None, status: int = 202) -> dict[str, Any]:
        response = self.client.post(path, json=body, headers=self.headers)
        assert response.status_code == status, response.text
        return response.json()

    def get(self, path: str) -> Any:
        response = self.client.get(path, headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()

    def wait(self, job: dict[str, Any]) -> dict[str, Any]:
        with self.client.stream("GET", f"/jobs/{job['id']}/events",
                                headers={**self.headers, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            stream.read()  # the stream ends when the job does
        return self.get(f"/jobs/{job['id']}")


@pytest.fixture
def cli(engine, database_url: str) -> Cli:
    return Cli(database_url)


@pytest.fixture
def api(cli: Cli, database_url: str, tmp_path: Path) -> Iterator[Api]:
    key = json.loads(cli("keys", "create", OWNER, "--json").stdout)["key"]
    settings = ApiSettings(database_url=database_url, uploads_dir=tmp_path / "uploads", job_runner="inprocess")
    with TestClient(create_app(settings)) as client:
        yield Api(client, key)


def evaluation_id(output: str) -> str:
    found = re.search(r"--resume (eval-[0-9a-f]+)", output)
    assert found is not None, output
    return found.group(1)


@pytest.mark.slow
def test_scripted_pipeline_author_release_evaluate_calibrate_adaptive_reverify_through_cli_and_api(
        cli: Cli, api: Api, models: dict[str, str], database_url: str, tmp_path: Path) -> None:
    scripts = models
    # author with a student pool (the three models) into a bank, next to curated templates
    bank = json.loads(cli("bank", "create", "flow", "--handler", "synthetic", "--owner", OWNER, "--json").stdout)
    pool = [f"{scripts[m]}@{rank}" for rank, m in enumerate(("weak", "medium", "strong"), start=1)]
    authored = cli("author", "--handler", "synthetic", "--task", "patterns in synthetic series", "--templates", "2",
                   "--generator", scripts["generator"], "--planner", scripts["planner"], "--judge", scripts["judge"],
                   *[a for student in pool for a in ("--student", student)], "--rounds", "1", "--slots", "2",
                   "--sandbox-workers", "1", "--out", str(tmp_path / "runs"), "--no-live", "--bank", "flow", "--json")
    summary = json.loads(authored.stdout)
    assert [t["stored"] for t in summary["bank"]["templates"]] == [True, True]
    cli("bank", "import-curated", "flow", "--reviewer", "curator", *[a for t in CURATED for a in ("-t", t)])
    shown = json.loads(cli("bank", "show", "flow", "--json").stdout)["versions"]
    assert sorted(v["status"] for v in shown) == ["accepted", "accepted", "approved", "approved", "approved"]
    with open_session(database_url) as session:
        answered = set(session.scalars(select(StudentResponseRow.model)))
    assert answered == {scripts[m] for m in STRENGTH}  # the pool's answers are in the bank

    # release (API job)
    job = api.wait(api.post(f"/banks/{bank['id']}/releases", {"seeds": list(SEEDS), "num_samples": SAMPLES}))
    assert job["status"] == "succeeded", job["error"]
    release_id = job["result"]["release_id"]
    assert job["result"]["items"] == ITEMS

    # evaluate three models: two API jobs, one CLI run; every answer stored
    jobs = [api.wait(api.post(f"/releases/{release_id}/evaluations", {"model": scripts[m]})) for m in ("strong", "medium")]
    assert [j["status"] for j in jobs] == ["succeeded", "succeeded"], [j["error"] for j in jobs]
    weak = json.loads(cli("release", "evaluate", "flow@1", "--model", scripts["weak"], "--json").stdout)
    reports = {"strong": jobs[0]["result"], "medium": jobs[1]["result"], "weak": weak}
    assert all(r["overall"]["n"] == ITEMS for r in reports.values())
    assert reports["strong"]["overall"]["accuracy"] > reports["medium"]["overall"]["accuracy"] > \
        reports["weak"]["overall"]["accuracy"]
    with open_session(database_url) as session:
        stored = list_evaluation_responses(session)
    assert sorted({r.model for r in stored}) == sorted(scripts[m] for m in STRENGTH) and len(stored) == 3 * ITEMS

    # calibrate: three respondents are too few (the count needed is named), on the priors it fits
    refused = cli("release", "calibrate", "flow@1", code=1)
    assert "3 respondent(s) answered its templates; calibration needs at least 5" in refused.output
    assert "evaluate 2 more model(s)" in refused.output and "--priors" in refused.output
    failed = api.wait(api.post(f"/releases/{release_id}/calibrations", {}))
    assert failed["status"] == "failed" and "needs at least 5" in failed["error"] and failed["result"] is None
    calibration = json.loads(cli("release", "calibrate", "flow@1", "--priors", "--json").stdout)
    assert calibration["below_minimum"] is True
    assert calibration["needs_review"] == [MIS_KEYED]
    ability = {r["respondent"]: r["ability"] for r in calibration["respondents"]}
    assert ability[scripts["strong"]] > ability[scripts["medium"]] > ability[scripts["weak"]]
    with open_session(database_url) as session:
        versions = list_versions(session, get_bank(session, "flow").id)
        irt = {v.template_key: list_verdicts(session, v.id, "irt") for v in versions}
    assert all(verdicts and verdicts[-1].run_id == calibration["calibration_id"] for verdicts in irt.values())
    listed = cli("release", "calibrate", "flow@1", "--priors").stdout
    assert f"to review (negative or near-zero discrimination, likely mis-keyed): {MIS_KEYED}" in listed

    # adaptive evaluation on the calibration: the stronger model gets the higher ability
    adaptive = {m: json.loads(cli("release", "evaluate", "flow@1", "--model", scripts[m], "--adaptive", "--seed",
                                  str(ADAPTIVE_SEED), "--max-items", str(ADAPTIVE_ITEMS), "--target-se", "0.3",
                                  "--json").stdout) for m in ("strong", "weak")}
    assert adaptive["strong"]["theta"] > adaptive["weak"]["theta"]
    assert all(a["items_used"] <= ADAPTIVE_ITEMS < ITEMS for a in adaptive.values())

    # re-verify with a new judge and the same pool: the evaluations' answers are found, no student is asked
    job = api.wait(api.post(f"/releases/{release_id}/reverify", {"judges": [scripts["new_judge"]], "students": pool}))
    assert job["status"] == "succeeded", job["error"]
    result = job["result"]
    assert result["student_calls"] == {"calls": 0, "fresh": 0, "cached": 3 * ITEMS}
    assert result["judges"] == [scripts["new_judge"]] and result["judge_calls"]["calls"] > 0
    with open_session(database_url) as session:
        asked = session.scalars(select(StudentResponseRow.id).where(StudentResponseRow.run_id == job["id"])).all()
    assert asked == []
    by_spec = {scripts[m]: report for m, report in reports.items()}
    for template in result["templates"]:  # each student's accuracy is its evaluation's, read from the bank
        assert {s["student"] for s in template["students"]} == set(by_spec)
        for shift in template["students"]:
            answers = [r["correct"] for r in by_spec[shift["student"]]["responses"]
                       if r["template_id"] == template["template_id"]]
            assert shift["new_accuracy"] == pytest.approx(float(np.mean(answers)))


@pytest.mark.slow
def test_scripted_model_failing_mid_evaluation_leaves_a_resumable_evaluation_not_a_report(
        cli: Cli, api: Api, scripts: dict[str, str], database_url: str, tmp_path: Path) -> None:
    bank = json.loads(cli("bank", "create", "flow", "--handler", "synthetic", "--owner", OWNER, "--json").stdout)
    cli("bank", "import-curated", "flow", "--reviewer", "curator", *[a for t in CURATED for a in ("-t", t)])
    job = api.wait(api.post(f"/banks/{bank['id']}/releases", {"seeds": [0, 1], "num_samples": SAMPLES}))
    release_id = job["result"]["release_id"]
    total = len(CURATED) * 2 * SAMPLES  # 24: past FAIL_AFTER, and a resumed run (FAIL_AFTER good replies
    # again) answers the rest, even after a first run that lost its 4 calls in flight

    # the command line: exit 1, no report (neither printed nor written), the id to resume with
    out_file = tmp_path / "report.json"
    args = ("release", "evaluate", "flow@1", "--model", scripts["failing"], "--concurrency", "1",
            "--out-file", str(out_file))
    stopped = cli(*args, code=1)
    stopped_id = evaluation_id(stopped.output)
    error = stopped.output.strip().splitlines()[-1]  # the failure itself says how to go on
    assert error.startswith("error:") and "HTTP 400" in error
    assert error.endswith(f"the answers so far are stored: resume with --resume {stopped_id}")
    assert "overall accuracy" not in stopped.output and not out_file.exists()
    with open_session(database_url) as session:
        assert len(list_evaluation_responses(session, evaluation_id=stopped_id)) == FAIL_AFTER
    resumed = cli(*args, "--resume", stopped_id, "--json")
    report = json.loads(resumed.stdout)
    assert report["evaluation_id"] == stopped_id and report["reused_answers"] == FAIL_AFTER
    assert report["overall"]["n"] == total and json.loads(out_file.read_text())["overall"]["n"] == total

    # the API: the job fails with the model's error and no result; resumed, it finishes
    job = api.wait(api.post(f"/releases/{release_id}/evaluations", {"model": scripts["failing"]}))
    assert job["status"] == "failed" and "HTTP 400" in job["error"] and job["result"] is None
    listed = {j["id"]: j for j in api.get(f"/releases/{release_id}/evaluations")}
    assert listed[job["id"]]["status"] == "failed" and listed[job["id"]]["result"] is None
    with open_session(database_url) as session:
        kept = len(list_evaluation_responses(session, evaluation_id=job["id"]))
    assert 0 < kept < total
    done = api.wait(api.post(f"/jobs/{job['id']}/resume"))
    assert done["status"] == "succeeded" and done["attempts"] == 2, done["error"]
    assert done["result"]["reused_answers"] == kept and done["result"]["overall"]["n"] == total
