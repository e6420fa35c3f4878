"""The worker ("zygote"): a clean process that preloads everything, then forks one child per run.

Started by the host with `python -P -s -m sandbox.zygote`, a scrubbed environment (no API
keys, no secrets), cwd "/", and only its stdin/stdout pipes. At start-up it enters an empty
network namespace, imports numpy/pandas/RestrictedPython/the helpers, loads the handler (a
built-in one directly; a user's handler file in a hardened child that returns a pickle-free
snapshot), builds the Landlock ruleset, runs a trusted warm-up template and freezes the GC.
Then, for each request, it forks a child that hardens itself (`sandbox.isolation`), runs the
template (`sandbox.runner`) and writes JSON to a pipe; the zygote enforces the wall-clock
limit with SIGKILL and an output cap, and reports how the child ended. The zygote itself never
runs untrusted code.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import json
import os
import select
import signal
import struct
import sys
import sysconfig
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np  # noqa: F401 - preloaded for the children
import pandas as pd  # noqa: F401 - preloaded for the children
import RestrictedPython  # noqa: F401 - preloaded for the children

from itemsmith import handlers
from itemsmith import sandbox
from itemsmith import templates_bank
from itemsmith.sandbox import isolation, landlock, proxies
from itemsmith.sandbox.handler_data import HandlerView, SnapshotError, decode_snapshot, encode_snapshot
from itemsmith.sandbox.models import RunRequest
from itemsmith.sandbox.protocol import read_frame, write_frame
from itemsmith.sandbox.runner import run_template_here
from itemsmith.sandbox.settings import MIB, SandboxLimits

ENVELOPE_SLACK = 256 * 1024  # room for status/error/printed around the items
MAX_REQUEST_BYTES = 6 * MIB  # a request: source (<= 4 MiB by SandboxLimits) plus JSON framing
SPARES = 2  # spare children kept forked and hardened (back-to-back runs get one forked a run earlier)
PREFORK_AFTER_S = 0.002  # a run still going after this long gets the next spare forked alongside

WARMUP_SOURCE = '''
import math
import statistics
import datetime
from collections import Counter, defaultdict

def question(num_samples):
    items = []
    records = handler.records()
    first = records["record_id"].iloc[0]
    frame = handler.series(first)
    text = str(frame.head()) + str(records.head()) + frame.describe().to_string()
    x = rng.normal(size=64).cumsum()
    s = pd.Series(x, index=pd.date_range("2021-01-01", periods=64, freq="h"))
    daily = s.resample("D").mean()
    roll = s.rolling(6).mean().diff().dropna()
    ewm = s.ewm(span=5).mean()
    df = pd.DataFrame({"v": x, "g": [i % 3 for i in range(64)], "t": s.index})
    df["day"] = df["t"].dt.day_name()
    g = df.groupby("g")["v"].agg(["mean", "std", "max"])
    g2 = df.groupby(df["t"].dt.date).agg(total=("v", "sum"))
    pv = df.pivot_table(index="g", columns="day", values="v", aggfunc="mean")
    m = df.merge(g.reset_index(), on="g").sort_values("v").head()
    q = pd.qcut(df["v"], 4, labels=False)
    c = pd.cut(df["v"], 3)
    fit = np.polyfit(np.arange(64), x, 2)
    spec = np.abs(np.fft.rfft(x))
    freq = np.fft.rfftfreq(64, d=1.0)
    cc = np.corrcoef(x[:-1], x[1:])
    sol = np.linalg.lstsq(np.vstack([np.arange(64), np.ones(64)]).T, x, rcond=None)
    h = np.histogram(x, bins="auto")
    pct = np.percentile(x, [5, 50, 95])
    st = statistics.median(list(x)) + statistics.stdev(list(x))
    when = datetime.datetime.strptime("2021-03-04 05:06", "%Y-%m-%d %H:%M")
    ts = pd.Timestamp("2021-01-01", tz="UTC").tz_convert("Europe/Paris")
    cnt = Counter(df["day"]).most_common(2)
    label = f"{when:%Y-%m-%d} {ts.isoformat()} {pct[1]:.3f} {'{:.2f}'.format(st)} {len(text)}"
    print(label)
    for i in range(num_samples):
        items.append(mc_item(f"Q{i} {label}", "up", ["down", "flat"], series=[series(x[:8], name="v")],
                             metadata={"fit": float(fit[0]), "peak": int(spec.argmax())}))
        items.append(tf_item(f"T{i}", bool(x[-1] > x[0])))
        items.append(pz_item(f"P{i}", x[:4], [x[4:8], x[8:12], x[12:16]]))
    return items
'''


# Run by every spare child after hardening, while it waits for its request, phase by phase
# (stopping as soon as the request is there): they copy the pages a typical template writes
# to (copy-on-write faults) off the request's critical path.
SPARE_WARMUP_PHASES = (
    '''
def question(num_samples):
    return [tf_item(f"{i:.1f} {'{:d}'.format(i)}", i % 2 == 0) for i in range(num_samples)]
''',
    '''
def question(num_samples):
    records = handler.records()
    frame = handler.series(records["record_id"].iloc[0])
    r = rng.normal(size=4)
    return [mc_item(f"{len(frame)} {r[0]:.2f}", "a", ["b", "c"], series=[series(r, name="v")])]
''',
    '''
def question(num_samples):
    frame = handler.series(handler.records()["record_id"].iloc[0])
    s = frame[frame.columns[0]].astype(float)
    x = s.rolling(3, min_periods=1).mean().diff().dropna()
    return [tf_item(f"{x.mean():.2f}", True)]
''',
    '''
def question(num_samples):
    x = np.arange(12.0)
    g = pd.DataFrame({"v": x, "k": [i % 2 for i in range(12)]}).groupby("k")["v"].agg(["mean", "max"])
    return [tf_item(f"{len(g)}", True)]
''',
    '''
def question(num_samples):
    x = np.sin(np.arange(16.0))
    fit = np.polyfit(np.arange(16), x, 1)
    spec = np.abs(np.fft.rfft(x))
    return [tf_item(f"{float(fit[0]):.3f} {int(spec.argmax())} {np.corrcoef(x[:-1], x[1:])[0, 1]:.2f}", True)]
''',
)


def _read_paths() -> list[str]:
    """What a child may read: the Python installation, site-packages, the project's packages,
    shared libraries and time-zone data. Not /tmp, /home, /root, /etc or the repository root."""
    paths = {sys.base_prefix, sys.base_exec_prefix, os.path.dirname(os.__file__)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        paths.add(sysconfig.get_paths()[key])
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages", "lib-dynload")):
            paths.add(entry)
    for package in (sandbox, handlers, templates_bank):
        paths.add(str(Path(package.__file__).parent))
    try:
        from itemsmith import verification  # noqa: PLC0415 - optional sibling package
        paths.add(str(Path(verification.__file__).parent))
    except Exception:  # noqa: BLE001
        pass
    paths.update(["/usr/lib", "/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache",
                  "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom"])
    return sorted(p for p in paths if p and os.path.exists(p))


class Zygote:
    def __init__(self, config: dict[str, Any]) -> None:
        self.limits = SandboxLimits(**config["limits"])
        self.handler_spec: dict[str, Any] = config["handler"]
        self.features: dict[str, Any] = {}
        self.root = os.geteuid() == 0
        self.uid = self.limits.sandbox_uid if self.root else None
        self.gid = self.limits.sandbox_gid if self.root else None
        self.view: HandlerView | None = None
        self.synth: Any = None  # loaded on first use: importing handlers.synthetic takes seconds
        self.ruleset_fd: int | None = None
        self.keep_read_capability = False
        self.read_paths = _read_paths()
        self.spares: collections.deque[Child] = collections.deque()
        self.zombies: list[int] = []

    # --- start-up -------------------------------------------------------------------------

    def start(self) -> None:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # inherited: only a warming spare listens
        self.features["netns"] = isolation.enter_network_namespace() if self.root else False
        self.seccomp_program: bytes | None = None
        if isolation.seccomp_available():
            try:
                self.seccomp_program = isolation.seccomp_program()
            except Exception as exc:  # noqa: BLE001 - reported as a missing feature
                self.features["seccomp_error"] = str(exc)
        self.features["seccomp"] = self.seccomp_program is not None
        self.features["rlimits"] = True
        self.features["uid"] = self.root
        try:
            self.ruleset_fd, abi = landlock.create_read_only_ruleset(self.read_paths)
            self.features["landlock"] = True
            self.features["landlock_abi"] = abi
        except (landlock.LandlockError, OSError) as exc:
            self.features["landlock"] = False
            self.features["landlock_error"] = str(exc)
        if self.root and self.uid is not None and self.gid is not None:
            python_dirs = [os.path.dirname(os.__file__), sysconfig.get_paths()["purelib"]]
            self.keep_read_capability = not isolation.uid_can_read(python_dirs, self.uid, self.gid)
        self.features["read_capability"] = self.keep_read_capability
        missing = [f for f in self.limits.required_features if not self.features.get(f)]
        if missing:
            raise RuntimeError(f"required isolation features unavailable: {', '.join(missing)}")
        self.view = HandlerView(self._load_handler())
        if "itemsmith.handlers.synthetic" in sys.modules:  # the handler imported it already: free to expose
            self.synth = proxies.synth_proxy()
        self._warm_up()
        gc.collect()
        gc.freeze()

    def _plan(self, keep_fd: int, *, memory_bytes: int, cpu_seconds: int, max_open_files: int,
              max_processes: int, ruleset_fd: int | None, keep_read_capability: bool) -> isolation.HardeningPlan:
        return isolation.HardeningPlan(
            keep_fds=(keep_fd,), memory_bytes=memory_bytes, cpu_seconds=cpu_seconds,
            max_open_files=max_open_files, max_processes=max_processes, ruleset_fd=ruleset_fd,
            uid=self.uid, gid=self.gid, keep_read_capability=keep_read_capability,
            seccomp=True, seccomp_program=self.seccomp_program, required=frozenset(self.limits.required_features))

    def _load_handler(self) -> Any:
        kind = self.handler_spec["kind"]
        if kind == "builtin":
            handler = handlers.get_builtin(self.handler_spec["name"])
            records = handler.records()  # builds and caches the data before any fork
            if len(records):
                handler.series(records["record_id"].iloc[0])
            return handler
        if kind == "file":
            return self._load_user_handler(self.handler_spec["path"])
        raise RuntimeError(f"unknown handler kind {kind!r}")

    def _load_user_handler(self, path: str) -> Any:
        """Run the user's handler file in a hardened child and decode its snapshot."""
        folder = os.path.dirname(path)
        from itemsmith.sandbox.executor import check_handler_folder  # noqa: PLC0415 - same rule as the host

        check_handler_folder(Path(folder))
        ruleset_fd = None
        if self.features.get("landlock"):
            ruleset_fd, _ = landlock.create_read_only_ruleset([*self.read_paths, folder])
        limits = self.limits
        r, w = os.pipe()
        plan = self._plan(w, memory_bytes=limits.handler_memory_mb * MIB,
                          cpu_seconds=int(limits.handler_load_s) + 1, max_open_files=256,
                          max_processes=limits.max_processes, ruleset_fd=ruleset_fd,
                          keep_read_capability=self.keep_read_capability or self._folder_needs_capability(folder))
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the loader child
            os.close(r)
            data = b"E"
            try:
                isolation.harden(plan)
                from itemsmith.handlers.loader import load_handler_source  # noqa: PLC0415

                source = Path(path).read_text()
                handler = load_handler_source(source, data_dir=Path(folder), filename=path)
                data = b"S" + encode_snapshot(handler, max_bytes=limits.handler_snapshot_bytes,
                                              max_records=limits.handler_max_records)
            except BaseException as exc:  # noqa: BLE001 - reported to the host
                data = b"E" + f"{type(exc).__name__}: {exc}"[:2000].encode("utf-8", "replace")
            finally:
                _write_output(w, data)
                os._exit(0)
        os.close(w)
        if ruleset_fd is not None:
            os.close(ruleset_fd)
        outcome = collect_child(pid, r, time.monotonic() + limits.handler_load_s,
                                limits.handler_snapshot_bytes + MIB)
        payload = outcome.pop("payload")
        if outcome["timed_out"]:
            raise RuntimeError(f"loading the handler file took longer than {limits.handler_load_s:g} s")
        if outcome["oversize"]:
            raise RuntimeError("the handler's data is larger than the sandbox snapshot limit")
        if outcome["signal"]:
            raise RuntimeError(f"loading the handler file was killed by {signal.Signals(outcome['signal']).name}")
        if payload[:1] == b"S":
            try:
                return decode_snapshot(payload[1:])
            except SnapshotError as exc:
                raise RuntimeError(f"the handler snapshot is invalid: {exc}") from None
        message = payload[1:].decode("utf-8", "replace") if payload[:1] == b"E" else "no output"
        raise RuntimeError(f"the handler file failed to load: {message}")

    def _folder_needs_capability(self, folder: str) -> bool:
        """Whether the sandbox uid needs CAP_DAC_READ_SEARCH to read the handler's folder."""
        if not self.root or self.uid is None or self.gid is None:
            return False
        return not isolation.uid_can_read([folder], self.uid, self.gid)

    def _warm_up(self) -> None:
        """Run a trusted template in this process so lazy imports happen before any fork."""
        try:
            text = run_template_here(WARMUP_SOURCE, handler=self.view, num_samples=1, seed=0,
                                     output_bytes=self.limits.output_bytes, print_bytes=1024, synth=self.synth)
            status = json.loads(text)["status"]
            self.features["warmup"] = status if status == "ok" else json.loads(text).get("error")
        except Exception as exc:  # noqa: BLE001 - warm-up is an optimization
            self.features["warmup"] = f"{type(exc).__name__}: {exc}"

    # --- runs -----------------------------------------------------------------------------

    def _default_limits(self) -> ChildLimits:
        lim = self.limits
        return ChildLimits(lim.memory_bytes, lim.effective_cpu_seconds, lim.max_open_files, lim.max_processes)

    def _spawn(self, limits: ChildLimits) -> Child:
        """Fork a child that hardens itself at once, then waits for its request on a pipe."""
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        plan = self._plan(res_w, memory_bytes=limits.memory_bytes, cpu_seconds=limits.cpu_seconds,
                          max_open_files=limits.max_open_files, max_processes=limits.max_processes,
                          ruleset_fd=self.ruleset_fd, keep_read_capability=self.keep_read_capability)
        plan = dataclasses.replace(plan, keep_fds=(req_r, res_w))
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the sandbox child
            os.close(req_w)
            os.close(res_r)
            self._child_main(req_r, res_w, plan)
        os.close(req_r)
        os.close(res_w)
        return Child(pid, req_w, res_r, limits)

    def _child_main(self, req_r: int, res_w: int, plan: isolation.HardeningPlan) -> None:  # pragma: no cover
        data = b""
        try:
            isolation.harden(plan)
            if self.limits.spare_warmup:
                self._prewarm_spare(req_r)
            raw = _read_all(req_r, MAX_REQUEST_BYTES)
            request = RunRequest.model_validate_json(raw)
            isolation.lower_limits(memory_bytes=request.memory_bytes, cpu_seconds=request.cpu_seconds,
                                   max_open_files=request.max_open_files, max_processes=request.max_processes)
            data = run_template_here(
                request.source, handler=self.view, num_samples=request.num_samples, seed=request.seed,
                output_bytes=request.output_bytes, print_bytes=request.print_bytes, synth=self.synth,
            ).encode("utf-8")
        except isolation.IsolationError as exc:
            data = json.dumps({"status": "error", "error": f"sandbox isolation failed: {exc}"}).encode()
        except BaseException as exc:  # noqa: BLE001
            data = json.dumps({"status": "error", "error": f"internal sandbox error ({type(exc).__name__}: "
                                                           f"{str(exc)[:200]})"}).encode()
        finally:
            _write_output(res_w, data)
            os.close(res_w)  # the worker may answer now, before this process is torn down
            os._exit(0)

    def _prewarm_spare(self, req_r: int) -> None:  # pragma: no cover - runs in the sandbox child
        """Warm up at SCHED_IDLE (only on otherwise idle CPU) until the request comes.

        The worker sends SIGUSR1 with the request: it cuts the phase in progress short, so the
        warm-up never delays a request. Outside this function SIGUSR1 is ignored (set in the
        worker before forking), so a late or early signal is harmless.
        """
        def interrupt(signum: int, frame: Any) -> None:
            raise _WarmupInterrupted

        try:
            try:
                signal.signal(signal.SIGUSR1, interrupt)
                try:
                    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
                except OSError:
                    pass
                for phase in SPARE_WARMUP_PHASES:
                    if select.select([req_r], [], [], 0)[0]:
                        break  # the request is here: stop warming up
                    run_template_here(phase, handler=self.view, num_samples=2, seed=0, output_bytes=1 << 20,
                                      print_bytes=0, synth=None)
            finally:
                signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        except BaseException:  # noqa: BLE001 - interrupted, or a failed phase: an optimization only
            pass
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        select.select([req_r], [], [])
        try:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass  # the worker has normally done it already

    def _take_child(self, request: RunRequest) -> Child:
        wanted = ChildLimits(request.memory_bytes, request.cpu_seconds, request.max_open_files,
                             request.max_processes)
        while self.spares:
            spare = self.spares.popleft()  # the oldest: hardened and warmed up the longest
            if spare.limits.covers(wanted) and _alive(spare.pid):
                return spare
            self._discard(spare)
        return self._spawn(wanted)

    def _discard(self, child: Child) -> None:
        for fd in (child.req_w, child.res_r):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.zombies.append(child.pid)

    def prefork(self) -> None:
        """Fork one more hardened spare child if fewer than SPARES are waiting."""
        if len(self.spares) < SPARES:
            self.spares.append(self._spawn(self._default_limits()))

    def reap(self, *, block: bool = False) -> None:
        """Collect finished children (they were SIGKILLed; teardown may still be running)."""
        block = block or len(self.zombies) > 8
        for pid in list(self.zombies):
            try:
                done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.zombies.remove(pid)

    def _ensure_synth(self, source: str) -> None:
        """Import `handlers.synthetic` before forking, the first time a template names `synth`
        (it can only reach the name by writing it). Spares forked before lack it."""
        if self.synth is None and "synth" in source:
            self.synth = proxies.synth_proxy()
            gc.collect()
            gc.freeze()
            while self.spares:
                self._discard(self.spares.popleft())

    def run(self, request: RunRequest) -> tuple[dict[str, Any], bytes]:
        self.reap()
        self._ensure_synth(request.source)
        child = self._take_child(request)
        started = time.monotonic()
        try:  # the spare idled at SCHED_IDLE: normal priority before it wakes up
            os.sched_setscheduler(child.pid, os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass  # not allowed without privileges: the child switches back itself
        _write_all(child.req_w, request.model_dump_json().encode("utf-8"))
        os.close(child.req_w)
        if self.limits.spare_warmup:
            try:
                os.kill(child.pid, signal.SIGUSR1)  # stop a warm-up in progress (ignored otherwise)
            except OSError:
                pass
        # The next spare is forked while this child runs, unless it finishes within a couple of
        # milliseconds: then the answer goes out first and the spare is forked after it.
        outcome = collect_child(child.pid, child.res_r, started + request.wall_seconds,
                                request.output_bytes + ENVELOPE_SLACK, early=True,
                                while_waiting=self.prefork, waiting_after_s=PREFORK_AFTER_S)
        if outcome.pop("pending", False):
            self.zombies.append(child.pid)
        payload = outcome.pop("payload")
        outcome["elapsed_ms"] = (time.monotonic() - started) * 1000
        outcome["kind"] = "result"
        return outcome, payload

    def _idle_reap(self, in_fd: int) -> None:
        """Reap finished children while no request is waiting (they take a few ms to go)."""
        while self.zombies and not select.select([in_fd], [], [], 0.02)[0]:
            self.reap()

    def serve(self, in_fd: int, out_fd: int) -> None:
        while True:
            self._idle_reap(in_fd)
            try:
                header, _ = read_frame(in_fd)
            except Exception:  # noqa: BLE001 - host went away
                return
            kind = header.get("kind")
            if kind == "shutdown":
                return
            if kind == "ping":
                write_frame(out_fd, {"kind": "pong", "features": self.features})
                continue
            received = time.monotonic()
            try:
                request = RunRequest.model_validate(header)
            except ValueError as exc:
                write_frame(out_fd, {"kind": "bad_request", "error": str(exc)[:500]})
                continue
            result, payload = self.run(request)
            result["worker_ms"] = (time.monotonic() - received) * 1000
            write_frame(out_fd, result, payload)
            self.prefork()
            self.reap()


class _WarmupInterrupted(BaseException):
    """Raised in a spare child by SIGUSR1 when its request arrives during the warm-up."""


@dataclasses.dataclass(frozen=True)
class ChildLimits:
    memory_bytes: int
    cpu_seconds: int
    max_open_files: int
    max_processes: int

    def covers(self, other: ChildLimits) -> bool:
        """A child hardened with these limits can lower them to `other` (rlimits only go down)."""
        return (other.memory_bytes <= self.memory_bytes and other.cpu_seconds <= self.cpu_seconds
                and other.max_open_files <= self.max_open_files and other.max_processes <= self.max_processes)


@dataclasses.dataclass
class Child:
    pid: int
    req_w: int
    res_r: int
    limits: ChildLimits


def _alive(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == 0


def _read_all(fd: int, cap: int) -> bytes:
    chunks = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if size > cap:
            raise ValueError("request too large")
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _write_output(fd: int, data: bytes) -> None:
    """Write a child's output, prefixed with its length (so the worker can stop reading the
    moment it is complete, without waiting for the child to close and exit)."""
    _write_all(fd, struct.pack("<Q", len(data)) + data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass


def collect_child(pid: int, fd: int, deadline: float, cap: int, *, early: bool = False,
                  while_waiting: Any = None, waiting_after_s: float = 0.0) -> dict[str, Any]:
    """Read a child's output, killing it at `deadline` or past `cap` bytes.

    Normally waits for the child to exit and reports its exit code or signal. With `early`,
    a child that closed its pipe after writing output counts as finished at once: it is
    SIGKILLed (it is only tearing itself down) and `pending` asks the caller to reap it later.
    `while_waiting` is called once if the child is still running `waiting_after_s` seconds in.
    """
    hook_at = time.monotonic() + waiting_after_s if while_waiting is not None else None
    chunks: list[bytes] = []
    size = 0
    declared: int | None = None
    timed_out = oversize = exited = eof = complete = False
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    try:
        while not (eof and exited) and not (early and complete):
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                timed_out = True
                break
            wait = remaining if hook_at is None else min(remaining, max(0.0, hook_at - now))
            events = poller.poll(max(0, int(wait * 1000 + 0.999)))
            for ready_fd, _ in events:
                if ready_fd == pidfd:
                    poller.unregister(pidfd)
                    exited = True
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    poller.unregister(fd)
                    eof = True
                    continue
                size += len(chunk)
                if size > cap + 8:
                    oversize = True
                    break
                chunks.append(chunk)
                if declared is None and size >= 8:
                    declared = struct.unpack("<Q", b"".join(chunks)[:8])[0]
                if declared is not None and size >= declared + 8:
                    complete = True
            if not events and hook_at is not None and time.monotonic() >= hook_at:
                hook_at = None
                while_waiting()
            if oversize:
                break
            if exited and not eof:
                # the child is gone: what is left in the pipe can be read without blocking
                os.set_blocking(fd, False)
                try:
                    while size <= cap + 8:
                        chunk = os.read(fd, 1 << 16)
                        if not chunk:
                            break
                        size += len(chunk)
                        chunks.append(chunk)
                except BlockingIOError:
                    pass
                oversize = size > cap + 8
                if declared is None and size >= 8:
                    declared = struct.unpack("<Q", b"".join(chunks)[:8])[0]
                eof = True
    finally:
        if not exited:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pending = early and complete and not exited and not timed_out and not oversize
        status = None
        if not pending:
            _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        os.close(fd)
    sig = code = None
    if status is not None:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        if (timed_out or oversize) and sig == signal.SIGKILL:
            sig = None  # our own kill, reported as timed_out / oversize
    data = b"".join(chunks)
    payload = data[8:8 + declared] if declared is not None else b""
    return {"exit_code": code, "signal": sig, "timed_out": timed_out, "oversize": oversize,
            "pending": pending, "payload": b"" if oversize else payload}


def main() -> None:
    # The protocol moves to private fds; 0 and 1 point at /dev/null, so no stray write (Python
    # or C) can corrupt the channel.
    in_fd, out_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    try:
        header, _ = read_frame(in_fd)
        zygote = Zygote(header)
        zygote.start()
    except Exception as exc:  # noqa: BLE001 - reported to the host
        detail = str(exc) if type(exc) is RuntimeError else \
            "".join(traceback.format_exception_only(type(exc), exc)).strip()
        write_frame(out_fd, {"kind": "init_error", "error": detail[:2000]})
        return
    for _ in range(SPARES):
        zygote.prefork()
    write_frame(out_fd, {"kind": "ready", "features": zygote.features, "pid": os.getpid()})
    zygote.serve(in_fd, out_fd)


if __name__ == "__main__":
    main()
