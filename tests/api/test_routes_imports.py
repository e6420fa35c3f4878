"""POST /banks/imports and POST /banks/{id}/imports: an existing benchmark's file uploaded, its rows
read in the request (a bad row: 422 naming each bad row and column, nothing stored), its items
stored by the ``import`` job (run here synchronously, as a worker does); then released and audited
through POST /releases/{id}/audits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import execute_job, list_events
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import BankRow, TemplateVersionRow, VerdictRow, open_session

from ..templates_bank.test_static_items import tse_row
from .test_routes_banks import uploaded_files
from .test_routes_releases import make_release, run_job

SeededBank = Any  # tests/api/conftest.py: SeededBank


def tse_file(rows: list[dict[str, Any]] | None = None) -> bytes:
    """A TimeSeriesExam qa_dataset.json: three templates (tid 1-3) of four questions each."""
    rng = np.random.default_rng(0)
    return json.dumps(rows or [tse_row(tid, i, rng) for tid in (1, 2, 3) for i in range(4)]).encode()


def post_import(client: TestClient, key: str | None, content: bytes, *, bank_id: int | None = None,
                name: str = "exam", fmt: str = "tse", **fields: str):
    headers = {"X-API-Key": key} if key else {}
    files = {"file": ("qa_dataset.json", content, "application/json")}
    if bank_id is None:
        return client.post("/banks/imports", data={"name": name, "format": fmt, **fields}, files=files,
                           headers=headers)
    return client.post(f"/banks/{bank_id}/imports", data={"format": fmt, **fields}, files=files, headers=headers)


def stored(engine: Engine) -> tuple[int, int, int, int]:
    """Banks, template versions, verdicts and jobs in the database."""
    with open_session(engine) as session:
        return tuple(session.scalar(select(func.count()).select_from(t)) or 0  # type: ignore[return-value]
                     for t in (BankRow, TemplateVersionRow, VerdictRow, JobRow))


def test_a_tse_file_becomes_a_bank_whose_import_job_stores_each_group_with_progress(
        client, api_key, engine, api_settings, job_runner) -> None:
    response = post_import(client, api_key, tse_file())
    assert response.status_code == 202, response.text
    bank, job = response.json()["bank"], response.json()["job"]
    assert bank["name"] == "exam" and bank["owner"] == "alice" and bank["handler"]["name"] == "static:exam"
    assert bank["task"] == "items imported from qa_dataset.json"
    assert job["kind"] == "import" and job["status"] == "queued" and job_runner.dispatched == [job["id"]]
    assert stored(engine)[1] == 0  # nothing is stored before the job runs

    result = run_job(engine, api_settings, job["id"])
    assert (result["rows"], result["groups"], result["new_versions"], result["unchanged_versions"]) == (12, 3, 3, 0)
    assert result["source"] == "qa_dataset.json" and result["format"] == "tse"
    with open_session(engine) as session:
        progress = [e.payload for e in list_events(session, job["id"], kind="progress")]
    assert progress[0] == {"phase": "reading", "rows_parsed": 12, "groups": 3, "groups_stored": 0}
    assert progress[-1] == {"phase": "stored", "rows_parsed": 12, "groups": 3, "groups_stored": 3}
    listed = client.get(f"/banks/{bank['id']}/templates", headers={"X-API-Key": api_key}).json()
    assert sorted(t["template_key"] for t in listed["items"]) == [
        "tse-anomaly-detection-2", "tse-causality-analysis-3", "tse-pattern-recognition-1"]


def test_importing_the_same_file_again_stores_nothing_new(client, api_key, engine, api_settings) -> None:
    created = post_import(client, api_key, tse_file()).json()
    run_job(engine, api_settings, created["job"]["id"])
    before = stored(engine)
    again = post_import(client, api_key, tse_file(), bank_id=created["bank"]["id"])
    assert again.status_code == 202, again.text
    result = run_job(engine, api_settings, again.json()["id"])
    assert (result["new_versions"], result["unchanged_versions"]) == (0, 3)
    assert stored(engine)[:3] == before[:3]
    assert len(uploaded_files(api_settings)) == 1  # the same file is kept once


def _bad(update: dict[str, Any]) -> bytes:
    rng = np.random.default_rng(1)
    rows = [tse_row(1, i, rng) for i in range(4)]
    rows[1].update(update)
    return json.dumps(rows).encode()


@pytest.mark.parametrize(("update", "column", "message"), [
    ({"answer": "sideways"}, "answer", "the answer 'sideways' is not one of its options"),
    ({"ts": None}, "ts", "no series"),
    ({"ts": [1.0, "n/a", 2.0]}, "ts", "holds a non-number at position 1 ('n/a'): mixed types"),
    ({"options": ["up", [2.0], "flat", "cycle"]}, "options", "option 1 is [2.0]: an option is text or a number"),
    ({"question": "Which pattern?\x00"}, "question", "NUL"),
])
def test_a_bad_row_is_a_422_naming_its_row_and_column_and_nothing_is_stored(
        client, api_key, engine, api_settings, update: dict[str, Any], column: str, message: str) -> None:
    response = post_import(client, api_key, _bad(update))
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert problem["type"] == "bad_row" and (problem["row"], problem["field"]) == (2, column)
    assert problem["loc"] == ["body", "file", 2, column] and message in problem["msg"]
    assert stored(engine) == (0, 0, 0, 0) and left_behind(api_settings) == []


def left_behind(settings: ApiSettings) -> list[Path]:
    """Every file and folder under the uploads folder (and the folder itself)."""
    root = settings.uploads_dir
    return [root, *root.rglob("*")] if root.exists() else []


def _with_raw(field: str, raw: str) -> bytes:
    """Three good rows, the second with `field` set to `raw` JSON text (what json.dumps cannot write)."""
    rng = np.random.default_rng(3)
    rows = [tse_row(1, i, rng) for i in range(3)]
    rows[1][field] = "@@RAW@@"
    return json.dumps(rows).replace('"@@RAW@@"', raw).encode()


@pytest.mark.parametrize(("field", "raw", "message"), [
    ("ts", f"[1.0, {'9' * 5000}, 2.0]", "holds <an integer of 5000 digits> at position 1"),
    ("answer", "9" * 5000, "the answer <an integer of 5000 digits> is neither text nor a finite number"),
    ("tid", "9" * 5000, "tid must be text or a whole number, got <an integer of 5000 digits>"),
    ("options", f'["up", {"7" * 400}, "flat", "cycle"]', "option 1 is <an integer of 400 digits>"),
    ("ts", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("relevant_concepts", "[" * 900 + "]" * 900, "nested too deeply"),
    ("ts", "[1.0, NaN, 2.0]", "holds NaN at position 1"),
    ("ts", "[1.0, 1e999, 2.0]", "NaN or infinity"),
    ("options", '["up", Infinity, "flat", "cycle"]', "option 1 is Infinity"),
    ("answer", "-Infinity", "the answer -Infinity is neither text nor a finite number"),
    ("options", '["up", {"a": 1}, "flat", null]', "option 1 is {'a': 1}: an option is text or a number"),
    ("options", "[true, false]", "option 0 is True"),
    ("question", "12", "the question must be text, got 12"),
    ("category", '["x"]', "the category must be text"),
    ("tid", "1.5", "tid must be text or a whole number, got 1.5"),
    ("question_type", '{"kind": "binary"}', "question_type {'kind': 'binary'}"),
    ("subcategory", "7", "the subcategory must be text, got 7"),
    ("difficulty", "[]", "the difficulty must be text, got []"),
])
def test_red_team_what_json_accepts_and_the_schema_does_not_is_a_422_naming_row_and_field(
        client, api_key, engine, api_settings, field: str, raw: str, message: str) -> None:
    response = post_import(client, api_key, _with_raw(field, raw))
    assert response.status_code == 422, response.text
    [problem] = response.json()["detail"]
    assert (problem["type"], problem["row"], problem["field"]) == ("bad_row", 2, field)
    assert problem["loc"] == ["body", "file", 2, field] and message in problem["msg"], problem["msg"]
    assert len(problem["msg"]) < 400  # a huge value is named, not repeated
    assert stored(engine) == (0, 0, 0, 0) and left_behind(api_settings) == []


def test_red_team_bad_rows_in_json_lines_and_whole_rows_that_are_not_objects(client, api_key, engine,
                                                                              api_settings) -> None:
    rng = np.random.default_rng(4)
    lines = [json.dumps(tse_row(1, i, rng)) for i in range(3)]
    lines[1] = lines[1].replace('"tid": 1', f'"tid": {"9" * 5000}')
    lines.insert(2, "9" * 5000)
    lines.append("[" * 100_000)
    response = post_import(client, api_key, "\n".join(lines).encode())
    assert response.status_code == 422, response.text
    assert [(p["row"], p["field"]) for p in response.json()["detail"]] == [(2, "tid"), (3, None), (5, None)]
    assert "a row is a JSON object, got <an integer of 5000 digits>" in response.json()["detail"][1]["msg"]
    assert stored(engine) == (0, 0, 0, 0) and left_behind(api_settings) == []


def test_a_refused_upload_leaves_nothing_behind_but_keeps_what_was_there(client, api_key, engine,
                                                                         api_settings) -> None:
    good = post_import(client, api_key, tse_file())
    assert good.status_code == 202
    before, rows = left_behind(api_settings), stored(engine)
    refused = post_import(client, api_key, _bad({"answer": "sideways"}), bank_id=good.json()["bank"]["id"])
    assert refused.status_code == 422
    other = post_import(client, api_key, _bad({"answer": "sideways"}), name="other")
    assert other.status_code == 422
    assert left_behind(api_settings) == before and stored(engine) == rows


def test_every_bad_row_and_an_unreadable_file_are_listed(client, api_key, engine) -> None:
    rng = np.random.default_rng(2)
    rows = [tse_row(1, i, rng) for i in range(5)]
    rows[0]["answer"] = "nope"
    rows[3].pop("ts")
    detail = post_import(client, api_key, json.dumps(rows).encode()).json()["detail"]
    assert [(p["row"], p["field"]) for p in detail] == [(1, "answer"), (4, "ts")]
    broken = post_import(client, api_key, b"[{not json")
    assert broken.status_code == 422 and broken.json()["detail"][0]["type"] == "bad_file"
    assert "not valid JSON" in broken.json()["detail"][0]["msg"]
    assert stored(engine) == (0, 0, 0, 0)


def test_a_mapped_jsonl_file_imports_and_its_errors_name_the_files_columns(client, api_key, engine,
                                                                           api_settings) -> None:
    lines = [{"prompt": f"Does series {i} rise?", "choices": ["yes", "no"], "label": "yes" if i % 2 else "no",
              "ts": [float(i), float(i + 1), float(i - 1)], "task": "trend"} for i in range(4)]
    mapping = "question=prompt,options=choices,answer=label,series=ts,group=task,category=task"
    good = post_import(client, api_key, "\n".join(json.dumps(line) for line in lines).encode(), fmt="jsonl",
                       map=mapping)
    assert good.status_code == 202, good.text
    assert run_job(engine, api_settings, good.json()["job"]["id"])["groups"] == 1
    lines[2]["choices"] = ["yes", {"n": 1}]
    bad = post_import(client, api_key, "\n".join(json.dumps(line) for line in lines).encode(), fmt="jsonl",
                      map=mapping, bank_id=good.json()["bank"]["id"])
    assert bad.status_code == 422 and [(p["row"], p["field"]) for p in bad.json()["detail"]] == [(3, "choices")]
    unmapped = post_import(client, api_key, b"{}", fmt="jsonl", map="colour=red", name="other")
    assert unmapped.status_code == 422 and unmapped.json()["detail"][0]["loc"] == ["body", "map"]


def test_hf_is_for_the_command_line_and_a_nul_in_a_form_field_is_refused(client, api_key, engine) -> None:
    hf = post_import(client, api_key, tse_file(), fmt="hf")
    assert hf.status_code == 422 and hf.json()["detail"][0]["loc"] == ["body", "format"]
    nul = post_import(client, api_key, tse_file(), name="exam\x00")
    assert nul.status_code == 422 and nul.json()["detail"][0] == {
        "type": "string_nul", "loc": ["body", "name"], "msg": "text must not contain NUL (U+0000) characters"}
    assert stored(engine) == (0, 0, 0, 0)


def test_a_file_over_the_upload_limit_is_a_413_and_one_over_the_default_body_cap_is_not(
        app: FastAPI, client, api_key, engine, api_settings) -> None:
    over_request_cap = tse_file() + b" " * api_settings.max_request_bytes  # still valid JSON
    assert post_import(client, api_key, over_request_cap).status_code == 202
    app.state.settings = api_settings.model_copy(update={"max_upload_bytes": 1000})
    before = left_behind(api_settings)
    response = post_import(client, api_key, tse_file(), name="small")
    assert response.status_code == 413 and "1000-byte limit" in response.json()["detail"]
    assert left_behind(api_settings) == before  # not even the bank's folder
    with open_session(engine) as session:
        assert [b.name for b in session.scalars(select(BankRow))] == ["exam"]
    assert len(uploaded_files(api_settings)) == 1


def test_keys_and_owners(client, api_key, other_api_key, engine, seeded: SeededBank, api_settings) -> None:
    keyless = post_import(client, None, tse_file())
    assert keyless.status_code == 401 and "missing API key" in keyless.json()["detail"]
    mine = post_import(client, api_key, tse_file()).json()["bank"]
    before = stored(engine)
    theirs = post_import(client, other_api_key, tse_file(), bank_id=mine["id"])
    assert theirs.status_code == 404 and stored(engine) == before
    assert post_import(client, api_key, tse_file()).status_code == 409  # a bank of that name exists
    generated = post_import(client, api_key, tse_file(), bank_id=seeded.bank.id)
    assert generated.status_code == 409 and "generated templates" in generated.json()["detail"]
    assert stored(engine) == before and len(uploaded_files(api_settings)) == 1


def test_an_imported_release_is_audited_by_a_job_per_group_and_category(client, api_key, engine,
                                                                        api_settings) -> None:
    created = post_import(client, api_key, tse_file()).json()
    run_job(engine, api_settings, created["job"]["id"])
    release = make_release(client, api_key, engine, api_settings, created["bank"]["id"], {})
    headers = {"X-API-Key": api_key}
    job = client.post(f"/releases/{release['id']}/audits", headers=headers)
    assert job.status_code == 202 and job.json()["kind"] == "audit"
    report = run_job(engine, api_settings, job.json()["id"])
    assert sorted((g["group"], g["report"]["n_items"]) for g in report["groups"]) == [
        ("tse-anomaly-detection-2", 4), ("tse-causality-analysis-3", 4), ("tse-pattern-recognition-1", 4)]
    assert report["overall"]["items"] == 12 and {c["scope"] for c in report["categories"]} >= {"Anomaly Detection"}
    listed = client.get(f"/releases/{release['id']}/audits", headers=headers).json()
    assert [j["id"] for j in listed] == [job.json()["id"]]


def test_an_import_cancelled_after_its_first_group_resumes_with_the_others(client, api_key, engine,
                                                                           api_settings) -> None:
    job_id = post_import(client, api_key, tse_file()).json()["job"]["id"]

    def cancel_after_the_first_group(context) -> None:
        publish = context.publish

        def publish_then_cancel(kind: str, payload: dict[str, Any], **options: Any) -> None:
            publish(kind, payload, **options)
            if payload.get("groups_stored") == 1:
                context.interrupt("cancel")

        context.publish = publish_then_cancel

    assert execute_job(engine, job_id, worker="test", settings=api_settings,
                       on_start=cancel_after_the_first_group) == "cancelled"
    assert stored(engine)[1] == 1
    assert client.post(f"/jobs/{job_id}/resume", headers={"X-API-Key": api_key}).status_code == 202
    result = run_job(engine, api_settings, job_id)
    assert (result["new_versions"], result["unchanged_versions"]) == (2, 1) and stored(engine)[1] == 3


def _many_rows(rows: int, per_group: int) -> bytes:
    """JSON lines of TimeSeriesExam rows, `per_group` a template."""
    rng = np.random.default_rng(7)
    return "\n".join(json.dumps(tse_row(1 + i // per_group, i, rng)) for i in range(rows)).encode()


def test_an_import_reports_rows_read_and_groups_stored_as_it_goes(client, api_key, engine, api_settings,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from itemsmith.service.jobs import _static_items

    monkeypatch.setattr(_static_items, "_PROGRESS_EVERY_S", 0.0)  # every step reported: the counts are exact
    job = post_import(client, api_key, _many_rows(2500, 500), audit="false").json()["job"]
    result = run_job(engine, api_settings, job["id"])
    with open_session(engine) as session:
        progress = [e.payload for e in list_events(session, job["id"], kind="progress")]
    reading = [p["rows_parsed"] for p in progress if p["phase"] == "reading"]
    assert reading == [1000, 2000, 2500]
    stored = [p["groups_stored"] for p in progress if p["phase"] != "reading"]
    assert stored == [1, 2, 3, 4, 5] and progress[-1]["phase"] == "stored"
    assert (result["rows"], result["groups"], result["audited"]) == (2500, 5, False)


def test_a_cancel_while_the_rows_are_read_stops_before_anything_is_stored(client, api_key, engine,
                                                                          api_settings) -> None:
    job_id = post_import(client, api_key, _many_rows(2500, 500), audit="false").json()["job"]["id"]

    def cancel_at_the_first_thousand_rows(context) -> None:
        publish = context.publish

        def publish_then_cancel(kind: str, payload: dict[str, Any], **options: Any) -> None:
            publish(kind, payload, **options)
            if payload.get("rows_parsed") == 1000:
                context.interrupt("cancel")

        context.publish = publish_then_cancel

    assert execute_job(engine, job_id, worker="test", settings=api_settings,
                       on_start=cancel_at_the_first_thousand_rows) == "cancelled"
    assert stored(engine)[1] == 0
    with open_session(engine) as session:
        progress = [e.payload for e in list_events(session, job_id, kind="progress")]
    assert [p["rows_parsed"] for p in progress] == [1000]
