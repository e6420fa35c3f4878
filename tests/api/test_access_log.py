"""The access log of a real `itemsmith serve` never holds a credential: an API key sent in the query
string (refused: 401), in a path, in a parameter named like a credential or percent-encoded is
written as ``[redacted]``, and the rest of the line stays readable."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from itemsmith.api.access_log import RedactCredentials, redact_credentials
from itemsmith.service.auth import create_key
from itemsmith.service.jobs import upgrade_database
from itemsmith.templates_bank.storage import get_engine, open_session

from ..support import answers, wait_until


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_access_log_of_itemsmith_serve_holds_no_key(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade_database(url)
    engine = get_engine(url)
    with open_session(engine) as session:
        key, _ = create_key(session, "alice", name="log")
    engine.dispose()
    port = _free_port()
    log = tmp_path / "server.log"
    env = {**os.environ, "ITEMSMITH_DATA_DIR": str(tmp_path), "ITEMSMITH_API_JOB_RUNNER": "inprocess"}
    with log.open("wb") as sink:
        server = subprocess.Popen([str(Path(sys.executable).with_name("itemsmith")), "serve", "--port", str(port),
                                   "--db", url], env=env, stdout=sink, stderr=sink)
    base = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            assert server.poll() is None, log.read_text()
            return answers(f"{base}/health")

        wait_until(healthy, "the server to answer /health", 120, interval_s=0.1)
        assert httpx.get(f"{base}/banks", params={"api_key": key}).status_code == 401
        assert httpx.get(f"{base}/banks", params={"kind": "x", "token": "not-shaped-like-a-key"}).status_code in (401,
                                                                                                                 422)
        assert httpx.get(f"{base}/templates/{key}", headers={"X-API-Key": key}).status_code == 422
        encoded = key.replace("_", "%5F")
        httpx.get(f"{base}/banks?note={encoded}", headers={"X-API-Key": key})
        assert httpx.get(f"{base}/banks", headers={"X-API-Key": key}).status_code == 200
        marker = "after-the-requests"
        httpx.get(f"{base}/health", params={"probe": marker})
        wait_until(lambda: marker in log.read_text(), "the access log line of the last request", 30, interval_s=0.1,
                   details=log.read_text)
    finally:
        server.terminate()
        server.wait(timeout=30)
    text = log.read_text()
    secret = key.removeprefix("ism_")
    assert secret not in text and encoded.removeprefix("ism%5F") not in text
    assert "not-shaped-like-a-key" not in text
    assert text.count("[redacted]") >= 4
    assert '"GET /banks?api_key=[redacted] HTTP/1.1" 401' in text  # the line is still there, and readable
    assert "GET /banks HTTP/1.1\" 200" in text


def test_the_filter_keeps_uvicorn_s_argument_shape_and_spares_harmless_parameters() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "GET", "/jobs?apiKey=abc&monkey=1&after=2", "1.1", 200), None)
    assert RedactCredentials().filter(record)
    assert record.args == ("127.0.0.1:5", "GET", "/jobs?apiKey=[redacted]&monkey=1&after=2", "1.1", 200)
    assert redact_credentials("Cookie: itemsmith_session=abc; theme=dark") == "Cookie: itemsmith_session=[redacted]; theme=dark"
    assert redact_credentials("Authorization: Bearer abc.def.ghi1") == "Authorization: [redacted]"
