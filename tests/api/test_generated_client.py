"""A client generated from the app's OpenAPI document by openapi-python-client runs the
main flow: upload a handler and its data file (typed as files, not strings), list banks, read a
template with its samples and plot (PNG bytes), approve, release, export and download the zip
(bytes), and read a 401 as a typed error. Jobs run for real (release and export in this process;
the authoring job a new bank starts is left queued: it needs a model)."""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import execute_job
from itemsmith.service.jobs._store import get_job

from ..support import wait_until
from .test_routes_banks import CSV_HANDLER

pytest.importorskip("openapi_python_client")
pytestmark = pytest.mark.slow

PACKAGE = "itemsmith_generated_client"
# the generator's own setting for binary media types it has no parser for: read them as files
CONFIG = "content_type_overrides:\n  application/zip: application/octet-stream\n  image/png: application/octet-stream\n"


class ReleaseAndExportRunner:
    """Runs release and export jobs on a thread of this process; leaves others (authoring) queued."""

    def __init__(self, engine: Engine, settings: ApiSettings) -> None:
        self.engine, self.settings = engine, settings
        self.threads: list[threading.Thread] = []

    def dispatch(self, job_id: str) -> None:
        from itemsmith.templates_bank.storage import open_session

        with open_session(self.engine) as session:
            kind = get_job(session, job_id).kind
        if kind in ("release", "export"):
            thread = threading.Thread(target=execute_job, args=(self.engine, job_id),
                                      kwargs={"worker": "test", "settings": self.settings})
            thread.start()
            self.threads.append(thread)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        for thread in self.threads:
            thread.join(120)


def _generate(schema: dict[str, Any], folder: Path) -> ModuleType:
    (folder / "openapi.json").write_text(json.dumps(schema))
    (folder / "config.yaml").write_text(CONFIG)
    generated = subprocess.run([sys.executable, "-m", "openapi_python_client", "generate", "--path",
                                str(folder / "openapi.json"), "--output-path", str(folder / PACKAGE), "--meta", "none",
                                "--config", str(folder / "config.yaml")], capture_output=True, text=True, timeout=300)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    assert "Warning" not in generated.stdout + generated.stderr, generated.stdout + generated.stderr
    sys.path.insert(0, str(folder))
    return importlib.import_module(PACKAGE)


def test_a_generated_client_runs_the_main_flow_uploads_included(engine: Engine, api_settings: ApiSettings,
                                                                api_key: str, seeded, tmp_path: Path) -> None:
    app = create_app(api_settings)
    runner = app.state.job_runner = ReleaseAndExportRunner(engine, api_settings)
    package = _generate(app.openapi(), tmp_path)
    try:
        _main_flow(package, app, api_key, seeded)
    finally:
        runner.stop()
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")


def _main_flow(package: ModuleType, app, api_key: str, seeded) -> None:
    types, models = _module("types"), _module("models")
    banks, review, releases, jobs = (_module(f"api.{group}") for group in ("banks", "review", "releases", "jobs"))
    create_bank, list_banks = _module("api.banks.create_bank"), _module("api.banks.list_banks")
    get_template, plot, approve = (_module(f"api.review.{op}") for op in ("get_template", "plot", "review"))
    create_release, export, download = (_module(f"api.releases.{op}")
                                        for op in ("create_release", "export", "download_export"))
    get_job_op = _module("api.jobs.get_job")
    assert banks and review and releases and jobs

    with TestClient(app, headers={"X-API-Key": api_key}) as http, TestClient(app) as anonymous:
        client = package.Client(base_url="http://testserver")
        client.set_httpx_client(http)
        nobody = package.Client(base_url="http://testserver")
        nobody.set_httpx_client(anonymous)

        # the upload: the body model types both files as File, not str
        body = models.BodyCreateBank(
            name="uploaded", task="questions about the uploaded series",
            handler_file=types.File(payload=io.BytesIO(CSV_HANDLER.encode()), file_name="handler.py"),
            data_files=[types.File(payload=io.BytesIO(b"id,value\na,1\na,2\nb,3\nb,4\n"), file_name="values.csv")])
        created = create_bank.sync_detailed(client=client, body=body)
        assert created.status_code == 202, created.content
        assert created.parsed.bank.name == "uploaded" and created.parsed.job.kind == "author"
        assert {b.name for b in list_banks.sync(client=client)} == {"alice-bank", "uploaded"}

        detail = get_template.sync(version_id=seeded.accepted.id, client=client)
        assert len(detail.samples) == 3 and detail.samples_error is None
        png = plot.sync(version_id=seeded.accepted.id, index=0, client=client)
        assert isinstance(png, types.File) and png.payload.read(8) == b"\x89PNG\r\n\x1a\n"
        approved = approve.sync_detailed(version_id=seeded.accepted.id, client=client,
                                         body=models.ReviewRequest(decision=models.ReviewRequestDecision("approve"), note="fine"))
        assert approved.status_code == 201

        def finished(job_id: str) -> Any:
            def final() -> Any:
                job = get_job_op.sync(job_id=job_id, client=client)
                return job if job.status not in ("queued", "running") else None

            job = wait_until(final, f"job {job_id} to end", 120, interval_s=0.1)
            assert job.status == "succeeded", job.error
            return job

        release_job = create_release.sync(bank_id=seeded.bank.id, client=client,
                                          body=models.ReleaseCreateRequest(seeds=[0, 1], num_samples=2))
        release_id = finished(release_job.id).result["release_id"]
        export_job = export.sync(release_id=release_id, client=client, format_="jsonl")
        finished(export_job.id)
        archive = download.sync(job_id=export_job.id, client=client)
        assert isinstance(archive, types.File)
        with zipfile.ZipFile(io.BytesIO(archive.payload.read())) as zipped:
            lines = zipped.read("data.jsonl").decode().splitlines()
        assert len(lines) == 2 * 2 * 2  # two templates (curated and the approved one), two seeds, two items

        refused = list_banks.sync_detailed(client=nobody)
        assert refused.status_code == 401 and isinstance(refused.parsed, models.ErrorDetail)
        assert "API key" in refused.parsed.detail
