"""No server path leaves the server: an uploaded handler is named by its class and content hash
in every response, release manifest, exported row, card, job and error message; the same bank
exports to the same bytes on two deployments with different data folders."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.items.schema import Decision, Provenance, Template
from itemsmith.service.auth import create_key
from itemsmith.service.jobs import execute_job
from itemsmith.templates_bank import releases
from itemsmith.templates_bank.handler_identity import handler_ref
from itemsmith.templates_bank.storage import (
    BankRow,
    add_template_version,
    get_engine,
    open_session,
    record_verdict,
    upgrade,
)

from .conftest import OWNER, TEMPLATE_SOURCE, RecordingRunner
from .test_routes_banks import CSV_HANDLER, post_bank

CSV = b"id,value\nr1,1.0\nr1,2.0\nr1,3.5\nr2,0.5\nr2,0.25\n"
RELEASED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Deployment:
    """A server with its own data folder: its database and its uploads live under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        url = f"sqlite:///{root / 'itemsmith.sqlite'}"
        upgrade(url)
        self.engine = get_engine(url)
        self.settings = ApiSettings(database_url=url, uploads_dir=root / "uploads")
        app = create_app(self.settings)
        app.state.job_runner = RecordingRunner()
        self.client = TestClient(app)
        with open_session(self.engine) as session:
            self.key = create_key(session, OWNER, name="test")[0]
        self.seen: list[str] = []  # every response body, to search for paths

    def call(self, method: str, url: str, **kwargs):
        response = self.client.request(method, url, headers={"X-API-Key": self.key}, **kwargs)
        self.seen.append(response.text if "zip" not in response.headers.get("content-type", "") else "")
        return response

    def publish(self) -> dict[str, bytes]:
        """Upload the CSV handler, accept one template, release it and export it in every format
        that writes a card or rows; returns the export zips by format."""
        files = [("handler_file", ("my_handler.py", CSV_HANDLER.encode(), "text/x-python")),
                 ("data_files", ("values.csv", CSV, "text/csv"))]
        created = self.client.post("/banks", data={"name": "csv-bank", "task": "values"}, files=files,
                                   headers={"X-API-Key": self.key})
        assert created.status_code == 202, created.text
        self.seen.append(created.text)
        bank_id = created.json()["bank"]["id"]
        with open_session(self.engine) as session:
            handler = session.scalar(select(BankRow.handler).where(BankRow.id == bank_id))
            version = add_template_version(session, bank_id, Template(
                id="argmax", source=TEMPLATE_SOURCE, title="argmax", category="math", handler=handler,
                provenance=Provenance(origin="generated", generator="scripted:test")), created_by="job")
            record_verdict(session, version.id, Decision(accepted=True, stage="structure"))
        assert handler.startswith(str(self.root))  # the server does keep the path, internally
        for url in ("/banks", f"/banks/{bank_id}", f"/banks/{bank_id}/templates", f"/templates/{version.id}?n=1"):
            assert self.call("GET", url).status_code == 200
        job = self.call("POST", f"/banks/{bank_id}/releases", json={"seeds": [0, 1], "num_samples": 2})
        assert job.status_code == 202, job.text
        release_id = self.run(job.json()["id"])["release_id"]
        assert self.call("GET", f"/releases/{release_id}").status_code == 200
        exports = {}
        for fmt in ("jsonl", "hf"):
            job = self.call("POST", f"/releases/{release_id}/exports", params={"format": fmt})
            assert job.status_code == 202, job.text
            self.run(job.json()["id"])
            assert self.call("GET", f"/jobs/{job.json()['id']}").status_code == 200
            response = self.call("GET", f"/exports/{job.json()['id']}")
            assert response.status_code == 200, response.text
            exports[fmt] = response.content
        return exports

    def run(self, job_id: str) -> dict:
        """Run the queued job here, as a worker would; its result."""
        assert execute_job(self.engine, job_id, worker="test", settings=self.settings) == "succeeded"
        return self.call("GET", f"/jobs/{job_id}").json()["result"]


def _texts(archive: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        return {name: zipped.read(name).decode("utf-8", errors="replace") for name in zipped.namelist()}


def test_two_deployments_export_the_same_bytes_and_no_response_names_a_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases, "utcnow", lambda: RELEASED_AT)  # the release time is in the manifest
    first, second = Deployment(tmp_path / "srv-one"), Deployment(tmp_path / "other-srv")
    exports = [first.publish(), second.publish()]
    assert exports[0] == exports[1]  # byte-identical zips
    for deployment, exported in zip((first, second), exports, strict=True):
        contents = [text for archive in exported.values() for text in _texts(archive).values()]
        for text in [*deployment.seen, *contents]:
            assert str(deployment.root) not in text and "uploads" not in text and "handler.py" not in text
    rows = [json.loads(line) for name, text in _texts(exports[0]["jsonl"]).items() if name.endswith(".jsonl")
            for line in text.splitlines()]
    expected = {"name": "CsvHandler", "sha256": handler_ref(_stored_handler(first)).sha256}
    assert rows and all(row["handler"] == expected for row in rows)
    manifest = json.loads(_texts(exports[0]["jsonl"])["manifest.json"])
    assert manifest["handler"] == expected and manifest["templates"][0]["handler"] == expected
    card = _texts(exports[0]["hf"])["README.md"]
    assert f"CsvHandler@sha256:{expected['sha256'][:12]}" in card


def _stored_handler(deployment: Deployment) -> str:
    with open_session(deployment.engine) as session:
        return session.scalar(select(BankRow.handler))


def test_a_changed_data_file_changes_the_handlers_hash(tmp_path: Path) -> None:
    """The hash covers the data files: the cheapest fake (hashing the handler's code only) fails."""
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "handler.py").write_text(CSV_HANDLER)
    (folder / "values.csv").write_bytes(CSV)
    before = handler_ref(str(folder / "handler.py"))
    (folder / "values.csv").write_bytes(CSV + b"r3,9.0\n")
    after = handler_ref(str(folder / "handler.py"))
    assert before.name == after.name == "CsvHandler" and before.sha256 != after.sha256


def test_a_refused_upload_names_no_server_path(client, api_key, api_settings) -> None:
    """The sandbox's message names the missing data file by its folder; the 422 shows the handler's
    name and hash instead."""
    response = post_bank(client, api_key, handler_source=CSV_HANDLER)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "values.csv" in detail and "CsvHandler@sha256:" in detail
    assert str(api_settings.uploads_dir) not in detail and str(api_settings.uploads_dir.parent) not in detail
