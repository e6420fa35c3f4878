"""Host side: workers (zygote processes), pools of them, and `run_template`.

The service process never forks itself to run a template: it starts each worker with
`subprocess` (fork+exec of a fresh interpreter, no inherited fds, a scrubbed environment, cwd
"/"), then only exchanges framed messages with it. A worker serves one run at a time; a pool
keeps N workers for one handler. A worker that stops answering is killed and replaced.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox.layers import ALL_LAYERS, IsolationUnavailable
from itemsmith.sandbox.models import RunRequest, RunResult
from itemsmith.sandbox.protocol import ProtocolError, read_frame, write_frame
from itemsmith.sandbox.results import build_result
from itemsmith.sandbox.settings import SandboxLimits, SandboxSettings

logger = logging.getLogger(__name__)

# The only environment a worker gets: no API keys, tokens or credentials can leak into it.
WORKER_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "HOME": "/nonexistent",
    "PYTHONHASHSEED": "0",  # same seed, same set/dict iteration order, same items
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "MPLBACKEND": "Agg",
}
RESPONSE_GRACE_SECONDS = 5.0
# A user's handler is loaded with read access to its whole folder: never one of these.
BROAD_FOLDERS = frozenset({"/", "/tmp", "/var/tmp", "/dev/shm", "/root", "/home", "/etc", "/usr", "/var", "/proc",
                           "/sys", "/dev", "/run", "/opt", "/srv", "/mnt", "/media", "/boot", "/work"})


def check_handler_folder(folder: Path) -> None:
    """Refuse handler files whose folder is a system or shared folder (the loader may read it all)."""
    resolved = folder.resolve()
    if str(resolved) in BROAD_FOLDERS or len(resolved.parts) < 3 or resolved == Path.home():
        raise SandboxError(f"put the handler file in a folder of its own (with its data files), not {str(resolved)!r}: "
                           "the sandbox lets the handler read everything in its folder")


def _folder_stamp(folder: Path) -> str:
    """sha256 of every entry's path, type, size and mtime under a handler's folder: a shared pool
    serves a snapshot of the data, so a changed data file (in a subfolder too) starts a new one."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            st = os.lstat(os.path.join(dirpath, name))
            digest.update(f"{os.path.relpath(dirpath, folder)}/{name}\0{st.st_mode}\0{st.st_size}\0"
                          f"{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class SandboxError(RuntimeError):
    """A worker could not be started (bad handler file, unknown handler, ...). A missing
    isolation layer is `IsolationUnavailable` instead: not the user's fault, the service's."""


def _warn_degraded(features: dict[str, Any]) -> None:
    """Never silent: a worker started without some layers (allow_degraded) says so on every start
    (with no logging configured, Python prints warnings to stderr)."""
    active = [layer for layer in ALL_LAYERS if features.get(layer)]
    logger.warning("the sandbox runs WITHOUT these isolation layers: %s (active: %s); "
                   "ITEMSMITH_SANDBOX_ALLOW_DEGRADED is for local development only",
                   ", ".join(features["missing"]), ", ".join(active) or "none")


class _WorkerGone(Exception):
    """The worker was dead before it received the request (safe to retry on another)."""


@dataclass(frozen=True)
class HandlerSpec:
    """A built-in handler by name, or a user's handler file by absolute path."""

    kind: str  # "builtin", "file", or "none" (no handler: probing the layers only)
    name: str | None = None
    path: str | None = None
    version: tuple[int, int, str] | None = None  # a handler file's (mtime_ns, size) and `_folder_stamp`

    @classmethod
    def parse(cls, name_or_path: str) -> HandlerSpec:
        from itemsmith.handlers.registry import BUILTIN_HANDLERS  # light, but keep import local

        path = Path(name_or_path)
        if name_or_path.endswith(".py") or path.is_file():
            if not path.is_file():
                raise SandboxError(f"handler file {name_or_path!r} does not exist")
            resolved = path.resolve()
            check_handler_folder(resolved.parent)
            st = resolved.stat()
            return cls(kind="file", path=str(resolved), version=(st.st_mtime_ns, st.st_size,
                                                                 _folder_stamp(resolved.parent)))
        if name_or_path not in BUILTIN_HANDLERS:
            raise SandboxError(BUILTIN_HANDLERS.unknown_message(name_or_path))
        return cls(kind="builtin", name=name_or_path)

    def to_config(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "path": self.path}


class Worker:
    """One zygote process, used by one thread at a time."""

    command: tuple[str, ...] = ("-P", "-s", "-m", "itemsmith.sandbox.zygote")  # after sys.executable

    def __init__(self, spec: HandlerSpec, limits: SandboxLimits, *, announce: bool = True) -> None:
        self.spec = spec
        self.limits = limits
        self.process = subprocess.Popen(  # our own interpreter and module
            [sys.executable, *self.command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if limits.debug else subprocess.DEVNULL,
            env=dict(WORKER_ENV), cwd="/", close_fds=True, start_new_session=True,
        )
        self.features: dict[str, Any] = {}
        try:
            assert self.process.stdin is not None and self.process.stdout is not None
            self._in = self.process.stdin.fileno()
            self._out = self.process.stdout.fileno()
            write_frame(self._in, {"handler": spec.to_config(), "limits": limits.model_dump(mode="json")})
            header, _ = read_frame(self._out, deadline=time.monotonic() + limits.startup_s)
        except (ProtocolError, OSError) as exc:
            self.kill()
            raise SandboxError(f"the sandbox worker did not start: {exc}") from None
        if header.get("kind") == "isolation_unavailable":
            self.kill()
            raise IsolationUnavailable(list(header.get("missing") or []), str(header.get("error") or ""))
        if header.get("kind") != "ready":
            self.kill()
            raise SandboxError(str(header.get("error") or "the sandbox worker did not start"))
        self.features = dict(header.get("features") or {})
        if self.features.get("missing") and announce:
            _warn_degraded(self.features)

    def probe(self) -> dict[str, Any]:
        """Ask the worker to fork a child as for a run and verify each layer from inside it."""
        write_frame(self._in, {"kind": "probe"})
        header, _ = read_frame(self._out, deadline=time.monotonic() + 30)
        if header.get("error"):
            raise SandboxError(f"the layer probe failed: {header['error']}")
        return header

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, request: RunRequest) -> RunResult:
        started = time.monotonic()
        deadline = started + request.wall_seconds + RESPONSE_GRACE_SECONDS
        try:
            write_frame(self._in, request.model_dump(mode="json"))
        except OSError:
            self.kill()
            raise _WorkerGone from None
        try:
            outcome, payload = read_frame(self._out, deadline=deadline,
                                          max_payload=request.output_bytes + 512 * 1024)
        except (ProtocolError, OSError) as exc:
            self.kill()
            return RunResult(status=RunStatus.killed if "timed out" in str(exc) else RunStatus.error,
                             error=f"the sandbox worker failed: {exc}",
                             elapsed_ms=(time.monotonic() - started) * 1000)
        elapsed = (time.monotonic() - started) * 1000
        if outcome.get("kind") != "result":
            return RunResult(status=RunStatus.error, error=str(outcome.get("error") or "bad worker reply"),
                             elapsed_ms=elapsed)
        return build_result(outcome, payload, request, elapsed)

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, 9)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                write_frame(self._in, {"kind": "shutdown"})
                self.process.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def make_request(source: str, *, num_samples: int, seed: int, limits: SandboxLimits) -> RunRequest:
    return RunRequest(
        source=source, num_samples=num_samples, seed=seed, wall_seconds=limits.wall_s,
        cpu_seconds=limits.effective_cpu_seconds, memory_bytes=limits.memory_bytes,
        output_bytes=limits.output_bytes, print_bytes=limits.print_bytes,
        max_open_files=limits.max_open_files, max_processes=limits.max_processes,
    )


class SandboxPool:
    """N workers for one handler; `run` is thread-safe and blocks while all workers are busy.

    Start-up (spawning the interpreter, importing numpy/pandas, loading the handler) happens
    once per worker; each run then costs a fork, the hardening steps and the template itself.
    """

    def __init__(self, handler: str, *, workers: int = 1, limits: SandboxLimits | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.spec = HandlerSpec.parse(handler)
        self.limits = limits or SandboxSettings().sandbox
        self.size = workers
        self._idle: queue.LifoQueue[Worker] = queue.LifoQueue()
        self._lock = threading.Lock()
        self._started = 0
        self._closed = False
        self.features: dict[str, Any] = {}
        self._release(self._start_worker())  # fail fast on a bad handler or missing isolation

    def _start_worker(self) -> Worker:
        worker = Worker(self.spec, self.limits)
        with self._lock:
            self._started += 1
            self.features = worker.features
        return worker

    def _acquire(self) -> Worker:
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                worker = None
            if worker is None:
                with self._lock:
                    can_start = self._started < self.size
                    if can_start:
                        self._started += 1
                if can_start:
                    try:
                        return Worker(self.spec, self.limits)
                    except BaseException:
                        with self._lock:
                            self._started -= 1
                        raise
                worker = self._idle.get()
            if worker.alive:
                return worker
            self._discard(worker)  # died while idle: take or start another

    def _discard(self, worker: Worker) -> None:
        with self._lock:
            self._started -= 1
        worker.kill()

    def _release(self, worker: Worker) -> None:
        if self._closed:
            worker.close()
            return
        if not worker.alive:
            self._discard(worker)
            return
        self._idle.put(worker)

    def worker_pids(self) -> list[int]:
        """Process ids of the idle workers (diagnostics and tests)."""
        with self._idle.mutex:
            return [w.process.pid for w in self._idle.queue]

    def run(self, source: str, *, num_samples: int = 5, seed: int = 0,
            limits: SandboxLimits | None = None) -> RunResult:
        """Run one template; never raises for anything the template does."""
        limits = limits or self.limits
        if self._closed:
            raise SandboxError("the sandbox pool is closed")
        if not 1 <= num_samples <= limits.max_samples:
            return RunResult(status=RunStatus.refused,
                             error=f"num_samples must be between 1 and {limits.max_samples}")
        if len(source.encode("utf-8", "surrogatepass")) > limits.source_bytes:
            return RunResult(status=RunStatus.refused, error=f"template source is larger than {limits.source_bytes} bytes")
        request = make_request(source, num_samples=num_samples, seed=seed, limits=limits)
        for attempt in range(2):
            worker = self._acquire()
            try:
                return worker.run(request)
            except _WorkerGone:
                if attempt:
                    raise SandboxError("the sandbox worker died before it received the run") from None
            finally:
                self._release(worker)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                break

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_POOLS: dict[tuple[Any, ...], SandboxPool] = {}
_POOLS_LOCK = threading.Lock()


def _startup_key(limits: SandboxLimits) -> tuple[Any, ...]:
    """Settings fixed when a worker starts (a pool is shared only between equal ones)."""
    return (limits.required_layers, limits.disabled_layers, limits.allow_degraded, limits.uid_base,
            limits.uid_count, limits.handler_load_s,
            limits.handler_memory_mb, limits.handler_snapshot_bytes, limits.handler_max_records, limits.spare_warmup,
            limits.memory_mb, limits.effective_cpu_seconds, limits.max_open_files, limits.max_processes)


def get_pool(handler: str, limits: SandboxLimits | None = None) -> SandboxPool:
    """A shared single-worker pool for `handler` (a new one when a handler file or its folder changes)."""
    limits = limits or SandboxSettings().sandbox
    spec = HandlerSpec.parse(handler)
    key = (spec, _startup_key(limits))
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool._closed:
            stale = [k for k in _POOLS if k[0].path is not None and k[0].path == spec.path and k != key]
            for k in stale:
                _POOLS.pop(k).close()
            pool = SandboxPool(handler, limits=limits)
            _POOLS[key] = pool
    return pool


def close_pools() -> None:
    with _POOLS_LOCK:
        for pool in _POOLS.values():
            pool.close()
        _POOLS.clear()


atexit.register(close_pools)


def _forget_pools_after_fork() -> None:
    """A process forked from one holding pools (a pre-forking web server) must not share the
    parent's worker pipes: it starts its own workers on first use."""
    global _POOLS_LOCK
    _POOLS_LOCK = threading.Lock()
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_pools_after_fork)


class LayerReport(BaseModel):
    """Which isolation layers a worker set up, and which a probe child verified from inside."""

    active: list[str]
    missing: list[str]  # required by the settings, not active
    verified: list[str]
    allow_degraded: bool
    errors: dict[str, str] = Field(default_factory=dict)

    @property
    def unverified(self) -> list[str]:
        """Set up by the worker but not what a child sees: a bug, never allowed."""
        return sorted(set(self.active) - set(self.verified))

    def summary(self) -> str:
        text = f"sandbox layers active: {', '.join(self.active) or 'none'}"
        if self.missing:
            text += f"; MISSING: {', '.join(self.missing)}"
            text += " (allowed: ITEMSMITH_SANDBOX_ALLOW_DEGRADED)" if self.allow_degraded else ""
        return text


def probe_isolation(limits: SandboxLimits | None = None) -> LayerReport:
    """Start a worker without a handler, have it fork a child as for a run and verify each
    layer from inside it, stop it. Never raises IsolationUnavailable (see `check_isolation`)."""
    limits = limits or SandboxSettings().sandbox
    worker = Worker(HandlerSpec(kind="none"), limits.model_copy(update={"allow_degraded": True}), announce=False)
    try:
        probe = worker.probe()
    finally:
        worker.close()
    features = worker.features
    active = [layer for layer in ALL_LAYERS if features.get(layer)]
    return LayerReport(active=active, missing=sorted(set(limits.required_layers) - set(active)),
                       verified=[layer for layer, ok in probe["verified"].items() if ok],
                       allow_degraded=limits.allow_degraded,
                       errors={k: str(v) for k, v in (features.get("errors") or {}).items()})


_REPORTS: dict[tuple[Any, ...], LayerReport] = {}
_REPORTS_LOCK = threading.Lock()


def isolation_report(limits: SandboxLimits | None = None) -> LayerReport:
    """`probe_isolation` once per process and configuration (the health route asks per request)."""
    limits = limits or SandboxSettings().sandbox
    key = _startup_key(limits)
    with _REPORTS_LOCK:
        if key not in _REPORTS:
            _REPORTS[key] = probe_isolation(limits)
        return _REPORTS[key]


def check_isolation(limits: SandboxLimits | None = None) -> LayerReport:
    """The start-up check of the service and its job workers: the report, or IsolationUnavailable
    when a required layer is missing (unless allow_degraded) or a layer is not in effect."""
    limits = limits or SandboxSettings().sandbox
    report = isolation_report(limits)
    if report.unverified:
        raise IsolationUnavailable(report.unverified, "set up by the worker, but not in effect in a sandbox child")
    if report.missing and not limits.allow_degraded:
        raise IsolationUnavailable(report.missing, "; ".join(f"{k}: {report.errors.get(k, 'unavailable')}"
                                                             for k in report.missing))
    return report


def run_template(source: str, handler: str, *, num_samples: int = 5, seed: int = 0,
                 limits: SandboxLimits | None = None) -> RunResult:
    """Run `question(num_samples)` of a template in the sandbox, against `handler`
    (a built-in handler name or a handler `.py` file). Never raises for template behaviour;
    a handler that cannot be loaded gives status `error`."""
    started = time.monotonic()
    try:
        pool = get_pool(handler, limits)
    except SandboxError as exc:  # IsolationUnavailable is raised: not a template's or handler's failure
        return RunResult(status=RunStatus.error, error=str(exc), elapsed_ms=(time.monotonic() - started) * 1000)
    return pool.run(source, num_samples=num_samples, seed=seed, limits=limits)
