"""The /jobs routes: keys, other owners' jobs, cancel and resume, events as JSON and as a
server-sent event stream of a real (scripted) authoring job."""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, update

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import InProcessRunner, submit_job
from itemsmith.service.jobs._store import create_job
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import BankCreate, create_bank, open_session

from .conftest import OTHER_OWNER, OWNER, AuthorScripts, RecordingRunner


def _queued(engine: Engine, owner: str = OWNER) -> str:
    with open_session(engine) as session:
        return create_job(session, kind="author", owner=owner, request={}, bank_id=None).id


def _set_status(engine: Engine, job_id: str, status: str) -> None:
    with open_session(engine) as session:
        session.execute(update(JobRow).where(JobRow.id == job_id).values(status=status))


def _routes(job_id: str) -> list[tuple[str, str]]:
    return [("GET", f"/jobs/{job_id}"), ("GET", f"/jobs/{job_id}/events"), ("POST", f"/jobs/{job_id}/cancel"),
            ("POST", f"/jobs/{job_id}/resume")]


def test_job_routes_need_a_key_and_hide_other_owners_jobs(client: TestClient, engine: Engine, api_key: str,
                                                          other_api_key: str) -> None:
    mine, theirs = _queued(engine), _queued(engine, OTHER_OWNER)
    for method, path in [("GET", "/jobs"), *_routes(mine)]:
        response = client.request(method, path)
        assert response.status_code == 401 and "API key" in response.json()["detail"]
        response = client.request(method, path, headers={"X-API-Key": "ism_not-a-key"})
        assert response.status_code == 401
    for job_id in (theirs, "0" * 32, "no-such-job"):
        for method, path in _routes(job_id):
            response = client.request(method, path, headers={"X-API-Key": api_key})
            assert response.status_code == 404, (method, path)
            assert response.json()["detail"] == f"no job with id {job_id!r}"
    listed = client.get("/jobs", headers={"X-API-Key": api_key})
    assert [job["id"] for job in listed.json()] == [mine]
    assert client.get(f"/jobs/{theirs}", headers={"X-API-Key": other_api_key}).json()["status"] == "queued"
    assert client.get("/jobs", params={"status": "running"}, headers={"X-API-Key": api_key}).json() == []
    assert client.get("/jobs", params={"status": "lost"}, headers={"X-API-Key": api_key}).status_code == 422


def test_cancel_and_resume_routes(client: TestClient, engine: Engine, api_key: str,
                                  job_runner: RecordingRunner) -> None:
    headers = {"X-API-Key": api_key}
    job_id = _queued(engine)
    response = client.post(f"/jobs/{job_id}/resume", headers=headers)
    assert response.status_code == 409 and "only failed or cancelled" in response.json()["detail"]
    cancelled = client.post(f"/jobs/{job_id}/cancel", headers=headers)
    assert cancelled.status_code == 202 and cancelled.json()["status"] == "cancelled"
    again = client.post(f"/jobs/{job_id}/cancel", headers=headers)
    assert again.status_code == 409 and "already cancelled" in again.json()["detail"]
    resumed = client.post(f"/jobs/{job_id}/resume", headers=headers)
    assert resumed.status_code == 202 and resumed.json()["status"] == "queued"
    assert job_runner.dispatched == [job_id]

    _set_status(engine, job_id, "running")
    asked = client.post(f"/jobs/{job_id}/cancel", headers=headers).json()
    assert asked["status"] == "running" and asked["cancel_requested"] is True


def test_events_as_a_json_list(client: TestClient, engine: Engine, api_key: str) -> None:
    job_id = _queued(engine)
    client.post(f"/jobs/{job_id}/cancel", headers={"X-API-Key": api_key})
    events = client.get(f"/jobs/{job_id}/events", headers={"X-API-Key": api_key}).json()
    assert [(e["seq"], e["payload"]["status"]) for e in events] == [(1, "queued"), (2, "cancelled")]
    later = client.get(f"/jobs/{job_id}/events", params={"after": 1}, headers={"X-API-Key": api_key}).json()
    assert [e["seq"] for e in later] == [2]
    assert client.get(f"/jobs/{job_id}/events", params={"after": -1},
                      headers={"X-API-Key": api_key}).status_code == 422


def _parse_sse(text: str) -> list[dict]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if not fields:  # a keep-alive comment, sent while the job is quiet
            continue
        events.append({"id": int(fields["id"]), "event": fields["event"], "data": json.loads(fields["data"])})
    return events


@pytest.mark.slow
def test_scripted_author_job_progress_streams_as_server_sent_events(
        app: FastAPI, engine: Engine, api_settings: ApiSettings, api_key: str, author_scripts) -> None:
    app.state.job_runner = InProcessRunner(engine, api_settings)
    scripts: AuthorScripts = author_scripts(("First", "Second"))
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="streamed", handler="synthetic", owner=OWNER))
    headers = {"X-API-Key": api_key, "Accept": "text/event-stream"}
    with TestClient(app) as client:
        job = submit_job(engine, kind="author", owner=OWNER, request=scripts.request(bank.id), bank_id=bank.id,
                         runner=app.state.job_runner)
        with client.stream("GET", f"/jobs/{job.id}/events", headers=headers) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            events = _parse_sse(response.read().decode())
        # a reconnecting client continues after the last event it saw
        replay = client.get(f"/jobs/{job.id}/events", headers={**headers, "Last-Event-ID": str(events[-3]["id"])})
        final = client.get(f"/jobs/{job.id}", headers={"X-API-Key": api_key}).json()
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["event"] == "status" and events[-1]["data"]["payload"]["status"] == "succeeded"
    accepted = [e["data"]["payload"]["title"] for e in events
                if e["event"] == "slot" and e["data"]["payload"]["phase"] == "accepted"]
    assert sorted(accepted) == ["First", "Second"]
    assert sum(e["event"] == "template" for e in events) == 2
    assert [e["id"] for e in _parse_sse(replay.text)] == [e["id"] for e in events[-2:]]
    assert final["status"] == "succeeded" and final["progress"]["stored"] == 2
