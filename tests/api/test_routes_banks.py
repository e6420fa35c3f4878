"""POST /banks (built-in or uploaded handler checked in the sandbox), GET /banks, GET /banks/{id}."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select

from itemsmith.api.settings import ApiSettings
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import BankCreate, BankExistsError, BankRow, create_bank, open_session

HANDLER = '''
import numpy as np
import pandas as pd


class TinyHandler:
    name = "tiny"
    description = "Two hourly series: a rises, b falls."

    def records(self):
        return pd.DataFrame({"record_id": ["a", "b"], "label": ["up", "down"]})

    def series(self, record_id):
        slope = {"a": 1.0, "b": -1.0}[record_id]
        return pd.DataFrame({"value": slope * np.arange(24.0)})
'''

CSV_HANDLER = '''
import pandas as pd


class CsvHandler:
    name = "csv"
    description = "Series read from the uploaded values.csv (columns id, value)."

    def __init__(self, data_dir):
        self.frame = pd.read_csv(data_dir / "values.csv")

    def records(self):
        return pd.DataFrame({"record_id": sorted(self.frame["id"].unique())})

    def series(self, record_id):
        return self.frame[self.frame["id"] == record_id][["value"]].reset_index(drop=True)
'''

BAD_HANDLERS = {
    "syntax": ("class Broken(:\n    pass\n", "syntax error"),
    "no_class": ("x = 1\n", "defines no handler class"),
    "raises": (HANDLER.replace('slope = {"a": 1.0, "b": -1.0}[record_id]', 'raise ValueError("no data here")'),
               "raised ValueError: no data here"),
    "reads_etc_passwd": (HANDLER.replace('return pd.DataFrame({"record_id"',
                                         'open("/etc/passwd").read()\n        return pd.DataFrame({"record_id"'),
                         "Error: [Errno"),  # PermissionError, or FileNotFoundError where the sandbox hides /etc
    "opens_a_socket": (HANDLER.replace(
        'return pd.DataFrame({"record_id"',
        'import socket\n        socket.create_connection(("127.0.0.1", 5432), timeout=2)\n'
        '        return pd.DataFrame({"record_id"'), "PermissionError"),
}


def post_bank(client: TestClient, key: str | None, *, name: str = "tiny", task: str = "rising or falling",
              files: list | None = None, **fields: str):
    headers = {"X-API-Key": key} if key else {}
    return client.post("/banks", data={"name": name, "task": task, **fields}, files=files or None, headers=headers)


def bank_count(engine: Engine) -> int:
    with open_session(engine) as session:
        return session.scalar(select(func.count()).select_from(BankRow))


def stored_handler(engine: Engine, bank_id: int) -> Path:
    """Where the server keeps the bank's uploaded handler (never in a response)."""
    with open_session(engine) as session:
        return Path(session.get(BankRow, bank_id).handler)


def uploaded_files(settings: ApiSettings) -> list[Path]:
    return [p for p in settings.uploads_dir.rglob("*") if p.is_file()] if settings.uploads_dir.exists() else []


def test_a_builtin_handler_creates_the_bank_and_queues_its_authoring_job(client, api_key, engine, job_runner) -> None:
    settings = {"templates": 2, "generator": "openai:gpt-4o", "judges": ["anthropic:claude-sonnet-4-5"],
                "students": ["openai:gpt-4o-mini@1", "openai:gpt-4o@2"], "rounds": 2, "seed": 7}
    response = post_bank(client, api_key, handler="synthetic", settings=json.dumps(settings))
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["bank"]["name"] == "tiny" and body["bank"]["owner"] == "alice"
    assert body["bank"]["handler"]["name"] == "synthetic" and len(body["bank"]["handler"]["sha256"]) == 64
    assert body["job"]["kind"] == "author" and body["job"]["status"] == "queued"
    assert body["job"]["bank_id"] == body["bank"]["id"]
    assert job_runner.dispatched == [body["job"]["id"]]
    with open_session(engine) as session:
        request = session.get(JobRow, body["job"]["id"]).request
    assert request["bank_id"] == body["bank"]["id"] and request["task"] == "rising or falling"
    assert request["templates"] == 2 and request["rounds"] == 2 and request["seed"] == 7
    assert request["generator"] == "openai:gpt-4o" and request["judges"] == ["anthropic:claude-sonnet-4-5"]
    assert [(s["spec"], s["rank"]) for s in request["students"]] == [("openai:gpt-4o-mini", 1), ("openai:gpt-4o", 2)]


def test_an_uploaded_source_is_loaded_in_the_sandbox_and_saved(client, api_key, api_settings, engine) -> None:
    response = post_bank(client, api_key, handler_source=HANDLER)
    assert response.status_code == 202, response.text
    handler_path = stored_handler(engine, response.json()["bank"]["id"])
    assert handler_path.name == "handler.py" and handler_path.read_text() == HANDLER
    assert handler_path.is_relative_to(api_settings.uploads_dir)
    assert response.json()["job"]["status"] == "queued"


def test_an_uploaded_file_reads_its_data_files_from_its_folder(client, api_key, engine) -> None:
    csv = b"id,value\nr1,1.0\nr1,2.0\nr1,3.5\nr2,0.5\nr2,0.25\n"
    files = [("handler_file", ("my_handler.py", CSV_HANDLER.encode(), "text/x-python")),
             ("data_files", ("values.csv", csv, "text/csv"))]
    response = post_bank(client, api_key, name="csv-bank", files=files)
    assert response.status_code == 202, response.text
    folder = stored_handler(engine, response.json()["bank"]["id"]).parent
    assert (folder / "values.csv").read_bytes() == csv
    assert (folder / "handler.py").read_text() == CSV_HANDLER


def test_a_handler_missing_its_data_file_is_refused(client, api_key, engine, api_settings) -> None:
    response = post_bank(client, api_key, handler_source=CSV_HANDLER)
    assert response.status_code == 422
    assert "values.csv" in response.json()["detail"] and "FileNotFoundError" in response.json()["detail"]
    assert bank_count(engine) == 0 and uploaded_files(api_settings) == []


@pytest.mark.parametrize("case", sorted(BAD_HANDLERS))
def test_a_handler_that_is_malformed_raises_or_attacks_is_refused_with_the_sandbox_message(
        case: str, client, api_key, engine, api_settings, job_runner) -> None:
    source, message = BAD_HANDLERS[case]
    response = post_bank(client, api_key, handler_source=source)
    assert response.status_code == 422, response.text
    assert message in response.json()["detail"]
    assert bank_count(engine) == 0 and job_runner.dispatched == []
    assert uploaded_files(api_settings) == []  # the rejected upload is removed


def test_a_handler_source_with_a_null_byte_is_refused_before_it_reaches_the_sandbox(client, api_key, engine,
                                                                                   job_runner) -> None:
    response = post_bank(client, api_key, handler_source="class H:\x00\n")
    assert response.status_code == 422 and response.json()["detail"][0]["type"] == "string_nul"
    assert bank_count(engine) == 0 and job_runner.dispatched == []


def test_a_handler_file_that_is_not_utf8_is_refused(client, api_key) -> None:
    response = post_bank(client, api_key, files=[("handler_file", ("h.py", b"\xff\xfe\x00bad", "text/x-python"))])
    assert response.status_code == 422 and "not UTF-8" in response.json()["detail"]


def test_oversized_handler_source_and_uploads_get_413(app: FastAPI, client, api_key, api_settings, engine) -> None:
    app.state.settings = api_settings.model_copy(update={"max_handler_source_bytes": 2000, "max_upload_bytes": 5000})
    big_source = HANDLER + "#" * 2000
    response = post_bank(client, api_key, handler_source=big_source)
    assert response.status_code == 413 and "2000" in response.json()["detail"]
    response = post_bank(client, api_key, files=[("handler_file", ("h.py", big_source.encode(), "text/x-python"))])
    assert response.status_code == 413
    files = [("data_files", ("a.bin", b"x" * 3000, "application/octet-stream")),
             ("data_files", ("b.bin", b"x" * 3000, "application/octet-stream"))]
    response = post_bank(client, api_key, handler_source=HANDLER, files=files)
    assert response.status_code == 413 and "5000" in response.json()["detail"] and "b.bin" in response.json()["detail"]
    assert bank_count(engine) == 0 and uploaded_files(api_settings) == []


def test_a_body_declared_over_the_cap_is_refused_before_it_is_read(api_settings, engine, api_key) -> None:
    from itemsmith.api.app import create_app

    small = api_settings.model_copy(update={"max_handler_source_bytes": 1000, "max_upload_bytes": 1000})
    with TestClient(create_app(small)) as client:
        files = [("data_files", ("a.bin", b"x" * 200_000, "application/octet-stream"))]
        response = post_bank(client, api_key, handler_source=HANDLER, files=files)
    assert response.status_code == 413 and "exceeds the limit" in response.json()["detail"]
    assert bank_count(engine) == 0 and uploaded_files(api_settings) == []


def test_a_validation_error_does_not_echo_the_submitted_value(client, api_key) -> None:
    response = client.post("/templates/1/review", headers={"X-API-Key": api_key},
                           json={"decision": "sk-live-secret", "note": ""})
    assert response.status_code == 422 and "decision" in response.text and "sk-live-secret" not in response.text


@pytest.mark.parametrize("file_name", ["../evil.csv", "..", "a/b.csv", ".hidden", "handler.py", "x" * 120, "a b.csv"])
def test_data_file_names_that_could_escape_or_collide_are_refused(file_name: str, client, api_key, tmp_path,
                                                                  api_settings) -> None:
    response = post_bank(client, api_key, handler_source=HANDLER,
                         files=[("data_files", (file_name, b"1,2\n", "text/csv"))])
    assert response.status_code == 422, response.text
    assert "data file" in response.json()["detail"]
    assert uploaded_files(api_settings) == [] and not (tmp_path / "evil.csv").exists()


def test_repeated_data_file_names_are_refused(client, api_key) -> None:
    files = [("data_files", ("a.csv", b"1", "text/csv")), ("data_files", ("a.csv", b"2", "text/csv"))]
    response = post_bank(client, api_key, handler_source=HANDLER, files=files)
    assert response.status_code == 422 and "repeat" in response.json()["detail"]


@pytest.mark.parametrize(("settings", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"api_key": "sk-live-secret"}', "api_key: Extra inputs are not permitted"),
    ('{"templates": 0}', "templates"),
    ('{"generator": "gpt-4o"}', "provider:model"),
    ('{"generator": "nosuch:model"}', "unknown provider"),
    ('{"generator": "openai_compatible:m@http://user:sk-live-secret@host/v1"}', "credentials"),
    ('{"students": ["openai:gpt-4o"]}', "SPEC@RANK"),
])
def test_bad_settings_are_refused_without_echoing_them(settings: str, message: str, client, api_key, engine) -> None:
    response = post_bank(client, api_key, handler="synthetic", settings=settings)
    assert response.status_code == 422
    assert message in response.json()["detail"]
    assert "sk-live-secret" not in response.text
    assert bank_count(engine) == 0


def test_a_recorded_reply_model_reading_a_server_file_is_refused_by_default(client, api_key, engine,
                                                                            monkeypatch) -> None:
    monkeypatch.delenv("ITEMSMITH_API_MODEL_PROVIDERS")
    response = post_bank(client, api_key, handler="synthetic", settings='{"generator": "scripted:/etc/passwd"}')
    assert response.status_code == 422 and "'scripted' is not enabled" in response.json()["detail"]
    assert bank_count(engine) == 0


@pytest.mark.parametrize("fields", [{}, {"handler": "synthetic", "handler_source": HANDLER}])
def test_exactly_one_handler_must_be_given(fields: dict, client, api_key) -> None:
    response = post_bank(client, api_key, **fields)
    assert response.status_code == 422 and "exactly one of" in response.json()["detail"]


def test_unknown_builtin_and_data_files_for_a_builtin_are_refused(client, api_key) -> None:
    response = post_bank(client, api_key, handler="no_such_handler")
    assert response.status_code == 422 and "built-in handlers: " in response.json()["detail"]
    response = post_bank(client, api_key, handler="synthetic", files=[("data_files", ("a.csv", b"1", "text/csv"))])
    assert response.status_code == 422 and "built-in" in response.json()["detail"]


@pytest.mark.parametrize("name", ["../etc", "Upper", "", "a" * 101, "-x"])
def test_bad_bank_names_are_refused(name: str, client, api_key) -> None:
    response = post_bank(client, api_key, name=name, handler="synthetic")
    assert response.status_code == 422


def test_a_name_taken_by_the_same_owner_gets_409_and_keeps_the_first_bank(client, api_key, engine,
                                                                        api_settings) -> None:
    first = post_bank(client, api_key, handler_source=HANDLER)
    assert first.status_code == 202
    again = post_bank(client, api_key, handler_source=HANDLER)
    assert again.status_code == 409 and "you have a bank named 'tiny'" in again.json()["detail"]
    assert bank_count(engine) == 1
    assert uploaded_files(api_settings) == [stored_handler(engine, first.json()["bank"]["id"])]


def test_two_owners_may_use_the_same_bank_name(client, api_key, other_api_key, engine) -> None:
    """Names are unique per owner: another owner's bank of that name is neither a conflict nor
    revealed (the answer is the same as for a free name)."""
    mine = post_bank(client, api_key, handler="synthetic")
    theirs = post_bank(client, other_api_key, handler="synthetic")
    assert mine.status_code == 202 and theirs.status_code == 202, theirs.text
    assert mine.json()["bank"]["id"] != theirs.json()["bank"]["id"] and bank_count(engine) == 2
    assert [b["name"] for b in client.get("/banks", headers={"X-API-Key": other_api_key}).json()] == ["tiny"]
    # the database itself refuses a second bank of one owner with the same name
    with pytest.raises(BankExistsError), open_session(engine) as session:
        create_bank(session, BankCreate(name="tiny", handler="synthetic", owner="alice"))


def test_listing_and_reading_banks_shows_only_the_callers(client, api_key, other_api_key) -> None:
    mine = post_bank(client, api_key, name="mine", handler="synthetic").json()["bank"]
    theirs = post_bank(client, other_api_key, name="theirs", handler="synthetic").json()["bank"]
    listed = client.get("/banks", headers={"X-API-Key": api_key})
    assert listed.status_code == 200 and [b["name"] for b in listed.json()] == ["mine"]
    assert client.get(f"/banks/{mine['id']}", headers={"X-API-Key": api_key}).json() == mine
    foreign = client.get(f"/banks/{theirs['id']}", headers={"X-API-Key": api_key})
    unknown = client.get("/banks/999999", headers={"X-API-Key": api_key})
    assert foreign.status_code == unknown.status_code == 404
    assert foreign.json()["detail"] == f"no bank with id {theirs['id']}"
    assert client.get(f"/banks/{2**40}", headers={"X-API-Key": api_key}).status_code == 422


def test_creating_a_bank_needs_a_live_key(client, engine) -> None:
    assert post_bank(client, None, handler="synthetic").status_code == 401
    assert post_bank(client, "ism_not-a-key", handler="synthetic").status_code == 401
    assert bank_count(engine) == 0


def test_a_looping_handler_upload_is_refused_once_its_check_time_is_up(api_settings, engine, api_key) -> None:
    """Handler validation is bounded by ITEMSMITH_API_HANDLER_CHECK_S (here 2 s), not the sandbox's
    120 s handler-load limit; the 422 says why and nothing is kept."""
    from itemsmith.api.app import create_app

    looping = HANDLER.replace('return pd.DataFrame({"record_id"', 'while True:\n            pass\n        '
                                                                  'return pd.DataFrame({"record_id"')
    bounded = api_settings.model_copy(update={"handler_check_s": 2.0})
    with TestClient(create_app(bounded)) as client:
        response = post_bank(client, api_key, handler_source=looping)
    assert response.status_code == 422, response.text
    assert "longer than 2 s" in response.json()["detail"]
    assert bank_count(engine) == 0 and uploaded_files(api_settings) == []
