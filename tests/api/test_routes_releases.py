"""Release routes: releases and exports as jobs (export zips downloaded from the finished job),
list, read, verification, re-verification and evaluation jobs. Route tests run the release and export jobs
synchronously (`execute_job`), the way a worker does."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from sqlalchemy import select

from itemsmith.service.jobs import execute_job, get_job
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import BankCreate, ReleaseRow, create_bank, open_session

SeededBank = Any  # tests/api/conftest.py: SeededBank


def run_job(engine, api_settings, job_id: str) -> dict:
    """Run the queued job here, as a worker would; its result."""
    assert execute_job(engine, job_id, worker="test", settings=api_settings) == "succeeded"
    with open_session(engine) as session:
        return get_job(session, job_id).result


def make_release(client, api_key, engine, api_settings, bank_id: int, body: dict) -> dict:
    response = client.post(f"/banks/{bank_id}/releases", json=body, headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["kind"] == "release" and job["status"] == "queued"
    result = run_job(engine, api_settings, job["id"])
    return client.get(f"/releases/{result['release_id']}", headers={"X-API-Key": api_key}).json()


def export(client, api_key, engine, api_settings, release_id: int, params: dict):
    response = client.post(f"/releases/{release_id}/exports", params=params, headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    job = response.json()
    early = client.get(f"/exports/{job['id']}", headers={"X-API-Key": api_key})
    assert early.status_code == 409 and "queued" in early.json()["detail"]  # not downloadable before it ran
    run_job(engine, api_settings, job["id"])
    return client.get(f"/exports/{job['id']}", headers={"X-API-Key": api_key})


@pytest.fixture
def release(client, api_key, engine, api_settings, seeded: SeededBank, job_runner) -> dict:
    made = make_release(client, api_key, engine, api_settings, seeded.bank.id,
                        {"seeds": [0, 1], "num_samples": 3, "note": "first"})
    job_runner.dispatched.clear()
    return made


def test_a_release_freezes_the_approved_and_accepted_templates(client, api_key, engine, api_settings,
                                                               seeded: SeededBank, release) -> None:
    manifest = release["manifest"]
    assert release["number"] == 1 and release["ref"] == "alice-bank@1" and release["bank_id"] == seeded.bank.id
    assert [t["template_id"] for t in manifest["templates"]] == ["exam_trend_direction", "argmax"]
    assert manifest["counts"]["items"] == 2 * 2 * 3 and manifest["note"] == "first"
    assert manifest["created_by"].startswith("alice (key ") and release["checksum"] == manifest["checksum"]
    assert client.get(f"/releases/{release['id']}", headers={"X-API-Key": api_key}).json() == release
    second = make_release(client, api_key, engine, api_settings, seeded.bank.id, {"template_ids": ["argmax"]})
    assert second["number"] == 2
    listed = client.get(f"/banks/{seeded.bank.id}/releases", headers={"X-API-Key": api_key}).json()
    assert [r["number"] for r in listed] == [1, 2] and listed[0] == release


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"template_ids": ["pending_one"]}, 409, "not releasable"),
    ({"seeds": [1, 1]}, 422, "distinct"),
    ({"seeds": []}, 422, ""),
    ({"num_samples": 0}, 422, ""),
    ({"created_by": "mallory"}, 422, ""),
])
def test_bad_release_requests_are_refused(body: dict, status: int, message: str, client, api_key, engine,
                                          seeded: SeededBank) -> None:
    response = client.post(f"/banks/{seeded.bank.id}/releases", json=body, headers={"X-API-Key": api_key})
    assert response.status_code == status, response.text
    assert message in json.dumps(response.json()["detail"])
    with open_session(engine) as session:
        assert session.query(ReleaseRow).count() == 0


def test_a_bank_with_nothing_releasable_gets_409(client, api_key, engine) -> None:
    with open_session(engine) as session:
        empty = create_bank(session, BankCreate(name="empty", handler="synthetic", owner="alice"))
    response = client.post(f"/banks/{empty.id}/releases", json={}, headers={"X-API-Key": api_key})
    assert response.status_code == 409 and "no approved or accepted" in response.json()["detail"]


def _zip(response) -> zipfile.ZipFile:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(response.content))


@pytest.mark.parametrize(("fmt", "data_file"), [("jsonl", "data.jsonl"), ("hf", "README.md"),
                                                ("lm-eval", None), ("inspect", None)])
def test_every_export_format_downloads_as_a_zip(fmt: str, data_file: str | None, client, api_key, engine,
                                                api_settings, release) -> None:
    response = export(client, api_key, engine, api_settings, release["id"], {"format": fmt})
    archive = _zip(response)
    names = set(archive.namelist())
    assert {"manifest.json", "export.json", "SHA256SUMS"} <= names and len(names) > 3
    assert json.loads(archive.read("manifest.json"))["checksum"] == release["checksum"]
    assert json.loads(archive.read("export.json"))["format"] == fmt
    assert f"alice-bank-1-{fmt}.zip" in response.headers["content-disposition"]
    if data_file is not None:
        assert data_file in names


def test_a_jsonl_export_has_every_item_and_the_same_bytes_twice(client, api_key, engine, api_settings,
                                                               release) -> None:
    params = {"format": "jsonl", "text_format": "csv", "decimals": 1}
    first = export(client, api_key, engine, api_settings, release["id"], params)
    lines = _zip(first).read("data.jsonl").decode().splitlines()
    assert len(lines) == release["manifest"]["counts"]["items"]
    assert export(client, api_key, engine, api_settings, release["id"], params).content == first.content


def test_release_and_export_jobs_report_progress(client, api_key, other_api_key, engine, api_settings,
                                                 seeded: SeededBank) -> None:
    made = make_release(client, api_key, engine, api_settings, seeded.bank.id, {"seeds": [0, 1], "num_samples": 2})
    export(client, api_key, engine, api_settings, made["id"], {"format": "jsonl"})
    jobs = {j["kind"]: j for j in client.get("/jobs", headers={"X-API-Key": api_key}).json()}
    assert jobs["release"]["progress"] == {"runs_done": 4, "runs": 4}  # 2 templates x 2 seeds
    assert jobs["export"]["progress"] == {"rows_done": 8, "rows": 8}
    events = client.get(f"/jobs/{jobs['release']['id']}/events", headers={"X-API-Key": api_key}).json()
    assert [e["payload"]["runs_done"] for e in events if e["kind"] == "progress"] == [1, 2, 3, 4]
    assert jobs["export"]["result"]["file"] == "alice-bank-1-jsonl.zip" and "/" not in jobs["export"]["result"]["file"]
    assert client.get(f"/exports/{jobs['export']['id']}", headers={"X-API-Key": other_api_key}).status_code == 404
    assert client.get(f"/exports/{jobs['release']['id']}", headers={"X-API-Key": api_key}).status_code == 404


def test_a_release_job_run_again_after_a_crash_creates_no_second_release(client, api_key, engine, api_settings,
                                                                         seeded: SeededBank) -> None:
    from sqlalchemy import update

    made = make_release(client, api_key, engine, api_settings, seeded.bank.id, {})
    with open_session(engine) as session:  # as if the worker died after storing, before reporting
        job_id = session.scalar(select(JobRow.id).where(JobRow.kind == "release"))
        session.execute(update(JobRow).where(JobRow.id == job_id).values(status="queued", result=None))
    assert run_job(engine, api_settings, job_id)["release_id"] == made["id"]
    with open_session(engine) as session:
        assert session.query(ReleaseRow).count() == 1


@pytest.mark.parametrize("params", [{"format": "xml"}, {"format": "lm-eval", "plots": "true"}, {"decimals": 11},
                                    {"text_format": "yaml"}])
def test_bad_export_options_get_422(params: dict, client, api_key, release, job_runner) -> None:
    response = client.post(f"/releases/{release['id']}/exports", params=params, headers={"X-API-Key": api_key})
    assert response.status_code == 422, response.text
    assert job_runner.dispatched == []


def test_verification_is_a_job_listed_with_its_release(client, api_key, engine, api_settings, release) -> None:
    response = client.post(f"/releases/{release['id']}/verifications", headers={"X-API-Key": api_key})
    assert response.status_code == 202 and response.json()["kind"] == "verify"
    report = run_job(engine, api_settings, response.json()["id"])
    assert report["release"] == release["ref"] and report["reproduced"] is True
    assert report["compared_with"] == "stored items" and report["items"] == release["manifest"]["counts"]["items"]
    assert all(t["reproduced"] and t["differences"] == [] for t in report["templates"])
    listed = client.get(f"/releases/{release['id']}/verifications", headers={"X-API-Key": api_key}).json()
    assert [(j["id"], j["progress"]) for j in listed] == [(response.json()["id"], {"runs_done": 4, "runs": 4})]


def test_reverification_is_a_job_listed_with_its_release(client, api_key, engine, release, job_runner) -> None:
    url = f"/releases/{release['id']}/reverify"
    response = client.post(url, json={"judges": ["openai:gpt-4o", "anthropic:claude-sonnet-4-5"],
                                      "students": ["openai:gpt-4o-mini@1"]}, headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    job = response.json()
    assert job["kind"] == "reverify" and job["status"] == "queued" and job_runner.dispatched == [job["id"]]
    with open_session(engine) as session:
        request = session.get(JobRow, job["id"]).request
    assert request["bank"] == "alice-bank" and request["release"] == 1
    assert request["judges"] == ["openai:gpt-4o", "anthropic:claude-sonnet-4-5"]
    listed = client.get(f"/releases/{release['id']}/reverifications", headers={"X-API-Key": api_key}).json()
    assert [j["id"] for j in listed] == [job["id"]]
    assert client.get(f"/releases/{release['id']}/evaluations", headers={"X-API-Key": api_key}).json() == []


def test_evaluation_is_a_job_listed_with_its_release(client, api_key, engine, api_settings, seeded: SeededBank,
                                                    release) -> None:
    other = make_release(client, api_key, engine, api_settings, seeded.bank.id, {})
    response = client.post(f"/releases/{release['id']}/evaluations",
                           json={"model": "openai:gpt-4o-mini", "formats": ["plain", "csv"], "fresh_seed": 42},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    job = response.json()
    with open_session(engine) as session:
        request = session.get(JobRow, job["id"]).request
    assert request["model"] == "openai:gpt-4o-mini" and request["formats"] == ["plain", "csv"]
    assert request["fresh_seed"] == 42 and request["release"] == 1
    assert [j["id"] for j in client.get(f"/releases/{release['id']}/evaluations",
                                        headers={"X-API-Key": api_key}).json()] == [job["id"]]
    assert client.get(f"/releases/{other['id']}/evaluations", headers={"X-API-Key": api_key}).json() == []


@pytest.mark.parametrize(("path", "body"), [
    ("reverify", {"judges": []}),
    ("reverify", {"judges": ["gpt-4o"]}),
    ("reverify", {"judges": ["openai:gpt-4o"], "api_key": "sk-live-secret"}),
    ("reverify", {"judges": ["openai:gpt-4o"], "students": ["openai:gpt-4o"]}),
    ("evaluations", {"model": "x"}),
    ("evaluations", {"model": "openai:gpt-4o", "formats": ["yaml"]}),
    ("evaluations", {"model": "openai:gpt-4o", "fresh_seed": -1}),
])
def test_bad_job_requests_get_422_and_queue_nothing(path: str, body: dict, client, api_key, engine, release,
                                                    job_runner) -> None:
    response = client.post(f"/releases/{release['id']}/{path}", json=body, headers={"X-API-Key": api_key})
    assert response.status_code == 422
    assert job_runner.dispatched == []
    with open_session(engine) as session:
        assert session.query(JobRow).filter(JobRow.kind != "release").count() == 0


def _release_routes(release_id: int, bank_id: int) -> list[tuple[str, str, dict | None]]:
    return [("POST", f"/banks/{bank_id}/releases", {}), ("GET", f"/banks/{bank_id}/releases", None),
            ("GET", f"/releases/{release_id}", None), ("POST", f"/releases/{release_id}/exports", None),
            ("POST", f"/releases/{release_id}/verifications", None), ("GET", f"/releases/{release_id}/verifications", None),
            ("POST", f"/releases/{release_id}/reverify", {"judges": ["openai:gpt-4o"]}),
            ("GET", f"/releases/{release_id}/reverifications", None),
            ("POST", f"/releases/{release_id}/evaluations", {"model": "openai:gpt-4o"}),
            ("GET", f"/releases/{release_id}/evaluations", None)]


def test_another_owners_releases_are_not_found(client, other_api_key, engine, seeded: SeededBank, release) -> None:
    for method, url, body in _release_routes(release["id"], seeded.bank.id):
        response = client.request(method, url, json=body, headers={"X-API-Key": other_api_key})
        assert response.status_code == 404, (url, response.text)
    with open_session(engine) as session:
        assert session.query(ReleaseRow).count() == 1
        assert session.query(JobRow).filter(JobRow.owner != "alice").count() == 0


def test_unknown_releases_are_not_found(client, api_key) -> None:
    for method, url, body in _release_routes(999999, 999999):
        response = client.request(method, url, json=body, headers={"X-API-Key": api_key})
        assert response.status_code == 404, (url, response.text)
