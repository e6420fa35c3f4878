"""Plot rendering out of the service process: item plots are drawn by a limited worker.

An item comes from template output, which is hostile: plotting it can cost minutes of CPU,
hundreds of MB or a RecursionError (nested mathtext, thousands of channels). So the service
never imports matplotlib for an item. `render_item_png(item)` sends the item as JSON to a
worker process (`python -m itemsmith.sandbox.render_worker`) and returns the PNG bytes.

The worker is a fresh interpreter with a scrubbed environment (no secrets), cwd "/", no
inherited fds and its own session. After preloading matplotlib and drawing a trusted warm-up
plot it caps its address space (`memory_mb` beyond the preloaded size), forbids file writes
(RLIMIT_FSIZE 0) and, per request, its CPU time (RLIMIT_CPU). It validates the item again
with the item schema (channel, point and label caps) and draws labels as plain text (no
mathtext). The host enforces a wall-clock deadline and a cap on the PNG size; on a timeout,
crash or malformed reply the worker is killed and the next request starts a new one.
One worker per process, requests serialized.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from itemsmith.items.schema import Item
from itemsmith.sandbox.protocol import ProtocolError, read_frame, write_frame
from itemsmith.sandbox.settings import RenderLimits, SandboxSettings

__all__ = ["RenderError", "render_item_png", "shutdown_renderer"]

MIB = 1024 * 1024
MIN_DPI, MAX_DPI = 10, 400
_ENV_KEEP = ("PATH", "LANG", "LC_ALL", "HOME", "MPLCONFIGDIR")


class RenderError(RuntimeError):
    """The plot could not be rendered; the message says why (invalid item, a limit, a crash)."""


def _worker_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env.update(MPLBACKEND="Agg", PYTHONHASHSEED="0", TZ="UTC", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    return env


class _Worker:
    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.process = subprocess.Popen(
            [sys.executable, "-m", "itemsmith.sandbox.render_worker", str(limits.memory_mb * MIB)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_worker_env(), cwd="/",
            close_fds=True, start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None  # both are pipes
        self.to_worker, self.from_worker = self.process.stdin.fileno(), self.process.stdout.fileno()
        try:
            header, _ = read_frame(self.from_worker, deadline=time.monotonic() + limits.startup_s, max_payload=0)
        except ProtocolError as exc:
            self.kill()
            raise RenderError(f"the plot worker did not start: {exc}") from None
        if header.get("status") != "ready":
            self.kill()
            raise RenderError(f"the plot worker did not start: {header.get('error', 'no ready message')}")

    def render(self, item_json: bytes, dpi: int) -> bytes:
        limits = self.limits
        write_frame(self.to_worker, {"cpu_s": limits.cpu_s, "dpi": dpi}, item_json)
        header, payload = read_frame(self.from_worker, deadline=time.monotonic() + limits.wall_s,
                                     max_payload=limits.max_png_bytes)
        status = header.get("status")
        if status == "ok" and payload.startswith(b"\x89PNG\r\n\x1a\n"):
            return payload
        error = header.get("error")
        raise RenderError(error if isinstance(error, str) and error else "the plot worker sent a malformed reply")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    def ended_by(self) -> str:
        code = self.process.poll()
        if code is None:
            return ""
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return {"SIGXCPU": f"plot rendering exceeded its CPU limit of {self.limits.cpu_s} s",
                    "SIGKILL": "plot rendering was killed (memory or time limit)",
                    "SIGXFSZ": "plot rendering tried to write a file"}.get(name, f"plot rendering ended by {name}")
        return f"the plot worker exited with status {code}"


_lock = threading.Lock()
_worker: _Worker | None = None


def render_item_png(item: Item | dict[str, Any], dpi: int = 100, limits: RenderLimits | None = None) -> bytes:
    """The item's series as a PNG (`items.plotting.plot_item(item, "png", dpi)`),
    drawn in the limited worker. Raises RenderError with a one-line reason: the item fails the
    schema (too many channels, points or label characters; no series), a limit was hit, or
    the worker failed."""
    global _worker  # one worker per process
    if type(dpi) is not int or not MIN_DPI <= dpi <= MAX_DPI:
        raise RenderError(f"dpi must be an integer from {MIN_DPI} to {MAX_DPI}")
    item_json = (item.model_dump_json() if isinstance(item, Item) else _dump(item)).encode("utf-8")
    with _lock:
        if _worker is not None and (limits is not None and _worker.limits != limits or _worker.process.poll() is not None):
            _worker.kill()
            _worker = None
        if _worker is None:
            _worker = _Worker(limits or SandboxSettings().render)
        worker = _worker
        try:
            return worker.render(item_json, dpi)
        except (ProtocolError, OSError) as exc:
            timed_out = "timed out" in str(exc)
            worker.kill()
            _worker = None
            if timed_out:
                raise RenderError(f"plot rendering took longer than {worker.limits.wall_s:g} s") from None
            raise RenderError(worker.ended_by() or f"the plot worker failed: {exc}") from None


def _dump(raw: dict[str, Any]) -> str:
    import json

    try:
        return json.dumps(raw, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise RenderError(f"the item is not plain JSON: {exc}") from None


def shutdown_renderer() -> None:
    """Stop the worker (tests, shutdown); the next render starts a new one."""
    global _worker
    with _lock:
        if _worker is not None:
            _worker.kill()
            _worker = None
