"""Shared fixtures for the sandbox tests: a user handler file, pools, and canaries.

Canaries: a secret in a file and in this (the "service") process's environment, marker files
an attack would create, and a loopback TCP listener that records every connection.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from itemsmith.sandbox import SandboxLimits, SandboxPool, get_pool

SECRET = "itemsmith-canary-" + secrets.token_hex(12)
os.environ["ITEMSMITH_CANARY_SECRET"] = SECRET  # the service's environment holds a secret

HANDLER_SOURCE = '''
import numpy as np
import pandas as pd


class TinyHandler:
    name = "tiny"
    description = "Three hourly series (unit: m): record a rises, b falls, c is flat with noise."

    def records(self):
        return pd.DataFrame({"record_id": ["a", "b", "c"], "label": ["up", "down", "flat"],
                             "start": pd.to_datetime(["2024-01-01", "2024-02-01", "2024-03-01"])})

    def series(self, record_id):
        slope = {"a": 1.0, "b": -1.0, "c": 0.0}[record_id]
        t = np.arange(72)
        noise = np.sin(t * 1.3) * 0.5
        return pd.DataFrame({"value": slope * t + noise},
                            index=pd.date_range("2024-01-01", periods=72, freq="h", name="time"))
'''


class Canaries:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.secret = SECRET
        self.secret_file = root / "secret.txt"
        self.secret_file.write_text(SECRET + "\n")
        os.chmod(self.secret_file, 0o644)
        self.marker_dir = root / "markers"
        self.marker_dir.mkdir()
        os.chmod(root, 0o755)
        os.chmod(self.marker_dir, 0o777)  # even a world-writable folder must stay untouched
        self.connections: list[tuple[str, int]] = []
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, addr = self.listener.accept()
            except OSError:
                return
            self.connections.append(addr)
            conn.close()

    def marker(self, name: str) -> Path:
        return self.marker_dir / name

    def substitute(self, source: str) -> str:
        return (source.replace("SECRET_FILE", str(self.secret_file)).replace("MARKER_DIR", str(self.marker_dir))
                .replace("LOOPBACK_PORT", str(self.port)))

    def assert_untouched(self, text: str = "") -> None:
        assert self.secret not in text, "the secret crossed the sandbox boundary"
        assert list(self.marker_dir.iterdir()) == [], "a marker file was created"
        assert self.connections == [], "something connected to the loopback listener"
        assert self.secret_file.read_text() == SECRET + "\n"

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="session")
def canaries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Canaries]:
    c = Canaries(tmp_path_factory.mktemp("canaries"))
    yield c
    c.close()


@pytest.fixture(scope="session")
def handler_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("handler") / "tiny_handler.py"
    path.write_text(HANDLER_SOURCE)
    return path


@pytest.fixture(scope="session")
def pool(handler_file: Path) -> SandboxPool:
    """The shared pool `run_template` also uses for this handler file (closed at exit)."""
    return get_pool(str(handler_file), SandboxLimits())


def _synthetic_available() -> bool:
    try:
        from itemsmith.handlers.registry import get_builtin

        get_builtin("synthetic")
    except Exception:  # noqa: BLE001 - written by another part of the project
        return False
    return True


@pytest.fixture(scope="session")
def synthetic_pool() -> Iterator[SandboxPool]:
    if not _synthetic_available():
        pytest.skip("the built-in 'synthetic' handler is not available")
    with SandboxPool("synthetic") as p:
        yield p
