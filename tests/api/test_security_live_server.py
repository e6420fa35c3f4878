"""Findings 1 and 2 of the service's security review, against a real server (`uvicorn` in a
subprocess, as `itemsmith serve` runs it):

- a request can never make the server send its credentials, or anything, to a URL it names: an
  OpenAI-compatible model is named by a configured endpoint (``ITEMSMITH_ENDPOINTS``), and only
  that endpoint is called, with its own key;
- a request body is authenticated before any of it is read and counted while it streams: an
  unauthenticated upload gets 401 with nothing written, an authenticated one over its cap gets 413
  with no more than the cap written. Bytes written are the server process's own count
  (``/proc/PID/io`` ``wchar``), which a control upload under the cap shows does see spooling.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from itemsmith.service.auth import create_key
from itemsmith.service.jobs import upgrade_database
from itemsmith.templates_bank.storage import get_engine, open_session

from ..support import answers, wait_until

ENDPOINT_KEY = "sk-endpoint-" + "e" * 24
OPERATOR_KEY = "sk-operator-" + "o" * 24  # the hosted provider's key: must reach no listener
MAX_UPLOAD = 2 * 1024 * 1024
MAX_SOURCE = 64 * 1024
UPLOAD_CAP = MAX_UPLOAD + MAX_SOURCE + 65536  # api.app: files + handler source + form fields
CHUNK = 64 * 1024


# --- an OpenAI-compatible listener that records everything it receives ------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Listener:
    port: int
    received: list[Received] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_for_request(self, timeout_s: float = 60.0) -> Received:
        wait_until(lambda: self.received, "a call to the configured endpoint", timeout_s, interval_s=0.05)
        return self.received[0]


def _serve_listener() -> tuple[Listener, ThreadingHTTPServer]:
    listener = Listener(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's name
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            listener.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "[]"}}],
                                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        do_GET = do_POST  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    listener.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return listener, server


@pytest.fixture(scope="module")
def listeners() -> Iterator[tuple[Listener, Listener]]:
    """(the configured endpoint `vllm`, a hostile listener no configuration names)."""
    endpoint, endpoint_server = _serve_listener()
    hostile, hostile_server = _serve_listener()
    yield endpoint, hostile
    for server in (endpoint_server, hostile_server):
        server.shutdown()
        server.server_close()


# --- the server ------------------------------------------------------------------------------


@dataclass
class LiveServer:
    url: str
    port: int
    key: str
    process: subprocess.Popen
    uploads: Path
    tmp: Path

    def written(self) -> int:
        """Bytes the server process has written so far (files, pipes, sockets)."""
        for line in Path(f"/proc/{self.process.pid}/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
        raise AssertionError("no wchar in /proc/PID/io")

    def files(self) -> list[Path]:
        return [p for root in (self.uploads, self.tmp) if root.exists() for p in root.rglob("*") if p.is_file()]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, listeners: tuple[Listener, Listener]) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("live")
    database_url = f"sqlite:///{root / 'bank.sqlite'}"
    upgrade_database(database_url)
    engine = get_engine(database_url)
    with open_session(engine) as session:
        key, _ = create_key(session, "alice", name="live")
    engine.dispose()
    endpoint, _ = listeners
    uploads, tmp = root / "uploads", root / "tmp"
    uploads.mkdir()
    tmp.mkdir()
    port = _free_port()
    env = {**os.environ, "ITEMSMITH_DATABASE_URL": database_url, "ITEMSMITH_DATA_DIR": str(root),
           "ITEMSMITH_API_UPLOADS_DIR": str(uploads), "TMPDIR": str(tmp), "ITEMSMITH_API_JOB_RUNNER": "inprocess",
           "ITEMSMITH_API_MAX_UPLOAD_BYTES": str(MAX_UPLOAD), "ITEMSMITH_API_MAX_HANDLER_SOURCE_BYTES": str(MAX_SOURCE),
           "ITEMSMITH_ENDPOINTS": json.dumps({"vllm": {"base_url": endpoint.base_url, "api_key_env": "VLLM_KEY",
                                                           "timeout_s": 30, "max_retries": 0}}),
           "VLLM_KEY": ENDPOINT_KEY, "OPENAI_API_KEY": OPERATOR_KEY, "ANTHROPIC_API_KEY": OPERATOR_KEY}
    env.pop("ITEMSMITH_API_MODEL_PROVIDERS", None)  # the server's defaults
    env.pop("ITEMSMITH_SCRIPTED_DIR", None)
    process = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "itemsmith.api.app:create_app",
                                "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=root)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else "the server exited"
        return answers(f"{url}/health", timeout_s=1)

    wait_until(healthy, "the server to answer /health", 60, interval_s=0.1)
    try:
        yield LiveServer(url=url, port=port, key=key, process=process, uploads=uploads, tmp=tmp)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# --- finding 1: named endpoints, never a URL --------------------------------------------------


def _bank_form(name: str, settings: dict) -> dict[str, str]:
    return {"name": name, "task": "trends in the series", "handler": "synthetic", "settings": json.dumps(settings)}


def test_a_request_naming_a_url_is_refused_and_only_the_configured_endpoint_gets_its_own_key(
        server: LiveServer, listeners: tuple[Listener, Listener]) -> None:
    endpoint, hostile = listeners
    headers = {"X-API-Key": server.key}
    for settings in ({"generator": f"openai_compatible:x@{hostile.base_url}"},
                     {"judges": [f"openai_compatible:x@{hostile.base_url}"]},
                     {"students": [f"openai_compatible:x@{hostile.base_url}@1"]},
                     {"generator": "openai_compatible:x@nosuch"}):
        response = httpx.post(f"{server.url}/banks", data=_bank_form("refused", settings), headers=headers)
        assert response.status_code == 422, response.text
        detail = response.json()["detail"]
        assert ("never by URL" in detail or "no model endpoint named 'nosuch'" in detail) and "vllm" in detail

    # the same server does call a configured endpoint, with that endpoint's key and nothing else
    accepted = httpx.post(f"{server.url}/banks", data=_bank_form("named", {"generator": "openai_compatible:m@vllm"}),
                          headers=headers)
    assert accepted.status_code == 202, accepted.text
    first = endpoint.wait_for_request()
    assert first.path == "/v1/chat/completions" and json.loads(first.body)["model"] == "m"
    for request in endpoint.received:
        assert request.headers["authorization"] == f"Bearer {ENDPOINT_KEY}"
        assert OPERATOR_KEY not in json.dumps(request.headers) and OPERATOR_KEY.encode() not in request.body
    assert hostile.received == []  # not a connection, not a header, not a prompt


# --- finding 2: bodies authenticated first, counted while they stream -------------------------


def _open(server: LiveServer, head: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head.encode("latin-1"))
    return sock


def _status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"the server closed the connection without a response: {data!r}"
        data += chunk
    return int(data.split(b" ", 2)[1])


def _chunk(payload: bytes) -> bytes:
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def _push_until_refused(sock: socket.socket, limit: int) -> int:
    """Keep sending chunks (up to `limit` bytes); how many were sent before the server hung up."""
    sent = 0
    try:
        while sent < limit:
            sock.sendall(_chunk(b"x" * CHUNK))
            sent += CHUNK
    except OSError:
        pass
    return sent


def _chunked_head(path: str, headers: dict[str, str]) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Transfer-Encoding: chunked",
             "Content-Type: multipart/form-data; boundary=b0undary", *(f"{k}: {v}" for k, v in headers.items())]
    return "\r\n".join(lines) + "\r\n\r\n"


@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "ism_" + "n" * 43}, {"Cookie": "itemsmith_key=whatever"}])
def test_an_unauthenticated_chunked_upload_gets_401_before_any_of_it_is_read(server: LiveServer,
                                                                             headers: dict[str, str]) -> None:
    before = server.written()
    with _open(server, _chunked_head("/banks", headers)) as sock:
        sock.sendall(_chunk(b"x" * CHUNK))
        assert _status(sock) == 401
        sent = _push_until_refused(sock, 256 * 1024 * 1024)
    assert sent < 256 * 1024 * 1024, "the server kept reading an unauthenticated upload"
    # the 401, log lines and the in-process job runner's own database writes (a few pages) happen
    # meanwhile; what the server accepted before hanging up is not spooled either
    assert server.written() - before < 256 * 1024
    assert server.files() == []


def test_a_sized_body_over_the_cap_gets_401_without_a_key_and_413_with_one(server: LiveServer) -> None:
    for headers, expected in (({}, 401), ({"X-API-Key": server.key}, 413)):
        head = "\r\n".join(["POST /banks HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {10**10}",
                            "Content-Type: multipart/form-data; boundary=b0undary",
                            *(f"{k}: {v}" for k, v in headers.items())]) + "\r\n\r\n"
        with _open(server, head) as sock:
            assert _status(sock) == expected


def _multipart_head(boundary: str) -> bytes:
    fields = [("name", "capped"), ("task", "trends in the series"), ("handler_source", "x = 1\n")]
    parts = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{n}"\r\n\r\n{v}\r\n'.encode()
                     for n, v in fields)
    return parts + (f'--{boundary}\r\nContent-Disposition: form-data; name="data_files"; filename="big.csv"\r\n'
                    "Content-Type: text/csv\r\n\r\n").encode()


def _upload(server: LiveServer, size: int) -> tuple[int, int]:
    """An authenticated chunked POST /banks with a data file of `size` bytes: (status, bytes written)."""
    before = server.written()
    with _open(server, _chunked_head("/banks", {"X-API-Key": server.key})) as sock:
        sock.sendall(_chunk(_multipart_head("b0undary")))
        sent = 0
        try:
            while sent < size:
                sock.sendall(_chunk(b"1," * (CHUNK // 2)))
                sent += CHUNK
            sock.sendall(_chunk(b"\r\n--b0undary--\r\n") + b"0\r\n\r\n")
        except OSError:
            pass
        status = _status(sock)
    return status, server.written() - before


def _wait_until_no_job_runs(server: LiveServer, timeout_s: float = 120.0) -> None:
    """Until every job of the server is final: a running job's database pages and log lines would
    count as upload bytes (the authoring job an earlier test started wrote 10 kB past the cap once)."""
    active: list[str] = []

    def none_active() -> bool:
        jobs = httpx.get(f"{server.url}/jobs", params={"limit": 500}, headers={"X-API-Key": server.key}).json()
        active[:] = [job["id"] for job in jobs if job["status"] in ("queued", "running")]
        return not active

    wait_until(none_active, "every job to end", timeout_s, interval_s=0.2, details=lambda: f"still running: {active}")


def test_an_authenticated_chunked_upload_over_the_cap_gets_413_with_at_most_the_cap_written(
        server: LiveServer) -> None:
    # control: an upload under the cap is spooled (past 1 MiB, to a temporary file): the count sees it
    _wait_until_no_job_runs(server)
    status, written = _upload(server, int(1.5 * 1024 * 1024))
    assert status != 413 and written > 1024 * 1024, (status, written)

    _wait_until_no_job_runs(server)  # the control upload queued a bank's job
    status, written = _upload(server, 64 * 1024 * 1024)
    assert status == 413
    assert written <= UPLOAD_CAP, f"{written} bytes written for a body capped at {UPLOAD_CAP}"


def test_a_review_form_post_without_the_login_cookie_is_redirected_before_its_body_is_read(
        server: LiveServer) -> None:
    with _open(server, _chunked_head("/review/templates/1/decision", {})) as sock:
        sock.sendall(_chunk(b"x" * CHUNK))
        assert _status(sock) == 303
        assert _push_until_refused(sock, 256 * 1024 * 1024) < 256 * 1024 * 1024
