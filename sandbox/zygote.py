"""The worker ("zygote"): a clean process that preloads everything, then forks one child per run.

Started by the host with `python -P -s -m itemsmith.sandbox.zygote`, a scrubbed environment (no
API keys, no secrets), cwd "/", and only its stdin/stdout pipes. At start-up it sets up the
layers it can (`sandbox.layers`): network, mount and PID namespaces and the filesystem views
(`sandbox.namespaces`), the seccomp program, the Landlock ruleset, and checks that a run's uid
can read the interpreter; it refuses to start (`isolation_unavailable`) when a required layer
is missing. Then it loads the handler (a built-in one directly; a user's handler file in a
hardened child that returns a pickle-free snapshot), runs a trusted warm-up template and freezes
the GC (a worker without a handler, kind "none", only answers layer probes). For each request it
hands the run to a child forked and hardened ahead (`sandbox.isolation`; its uid and result key
sent first thing after the fork), which runs the template (`sandbox.runner`) and writes one
sealed frame to its pipe (`sandbox.protocol.seal_result`); the zygote enforces the wall-clock
limit with SIGKILL and an output cap, accepts only one authentic frame, and reports how the
child ended. The zygote itself never runs untrusted code.
"""

from __future__ import annotations

import collections
import dataclasses
import gc
import json
import os
import resource
import secrets
import select
import signal
import struct
import sys
import sysconfig
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np  # preloaded for the children
import pandas as pd  # preloaded for the children
import RestrictedPython  # noqa: F401 - preloaded for the children

from itemsmith import handlers, items, sandbox
from itemsmith.sandbox import isolation, landlock, namespaces, proxies
from itemsmith.sandbox.handler_data import HandlerView, SnapshotError, decode_snapshot, encode_snapshot
from itemsmith.sandbox.isolation import IsolationError
from itemsmith.sandbox.layers import ALL_LAYERS, IsolationUnavailable
from itemsmith.sandbox.models import RunRequest
from itemsmith.sandbox.protocol import (
    RESULT_KEY_BYTES,
    ResultRejected,
    open_result,
    read_frame,
    seal_result,
    write_frame,
)
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
    for package in (sandbox, handlers, items):
        paths.add(str(Path(package.__file__).parent))
    try:
        from itemsmith import verification  # optional sibling package
        paths.add(str(Path(verification.__file__).parent))
    except Exception:  # noqa: BLE001
        pass
    paths.update(["/usr/lib", "/lib", "/lib64", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache",
                  "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom"])
    return sorted(p for p in paths if p and os.path.exists(p))


def _interpreter_paths() -> list[str]:
    """What a run's uid must be able to read: the standard library, site-packages, numpy and
    the project's packages (folders listed, files read)."""
    return [os.path.dirname(os.__file__), os.__file__, sysconfig.get_paths()["purelib"],
            np.__file__, pd.__file__, sandbox.__file__, str(Path(sandbox.__file__).parent)]


class Zygote:
    def __init__(self, config: dict[str, Any]) -> None:
        self.limits = SandboxLimits(**config["limits"])
        self.handler_spec: dict[str, Any] = config["handler"]
        self.features: dict[str, Any] = {}
        self.wanted = frozenset(ALL_LAYERS) - frozenset(self.limits.disabled_layers)
        self.layers: frozenset[str] = frozenset()  # the layers every child applies
        self.errors: dict[str, str] = {}
        self.view: HandlerView | None = None
        self.synth: Any = None  # loaded on first use: importing handlers.synthetic takes seconds
        self.ruleset_fd: int | None = None
        self.read_paths = _read_paths()
        self.run_view: str | None = None
        self.handler_folder_error: str | None = None
        self.loader_view: str | None = None
        self.host_netns: int | None = None
        self.seccomp_program: bytes | None = None
        self.spares: collections.deque[Child] = collections.deque()
        self.zombies: list[int] = []

    # --- start-up -------------------------------------------------------------------------

    def start(self) -> None:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # inherited: only a warming spare listens
        self._set_up_layers()
        if self.handler_spec["kind"] != "none":
            self.view = HandlerView(self._load_handler())
            if "itemsmith.handlers.synthetic" in sys.modules:  # the handler imported it already: free to expose
                self.synth = proxies.synth_proxy()
            self._warm_up()
        gc.collect()
        gc.freeze()

    def _try(self, layer: str, step: Any) -> bool:
        """Run one layer's set-up step; a failure is recorded, never raised."""
        if layer not in self.wanted:
            self.errors[layer] = "disabled (ITEMSMITH_SANDBOX_DISABLED_LAYERS)"
            return False
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - reported as a missing layer
            self.errors[layer] = str(exc) or type(exc).__name__
            return False
        return True

    def _set_up_layers(self) -> None:
        """Enter the namespaces, build the views, filter and ruleset; refuse to go on when a
        required layer is missing (unless allow_degraded)."""
        active: dict[str, bool] = dict.fromkeys(ALL_LAYERS, False)
        self.host_netns = os.stat("/proc/self/ns/net").st_ino
        isolation.keep_own_statm()  # the PID namespace's /proc has no entry for this process

        def require(condition: bool, why: str) -> None:
            if not condition:
                raise IsolationError(why)

        def require_capabilities(*caps: int) -> None:
            missing = isolation.missing_capabilities(*caps)
            require(not missing, f"needs {', '.join(missing)} (the worker runs as uid {os.geteuid()}; "
                                 "see docs/operator.md, 'Sandbox layers')")

        mounts_private = False
        if self.wanted & {"pidns", "fsview"}:
            try:
                require_capabilities(isolation.CAP_SYS_ADMIN)
                namespaces.make_mounts_private()
                mounts_private = True
            except OSError as exc:
                self.errors["mounts"] = str(exc)
            except IsolationError as exc:
                self.errors["mounts"] = str(exc)

        def netns() -> None:
            require_capabilities(isolation.CAP_SYS_ADMIN)
            namespaces.enter_network_namespace()
            self.features["netns_inode"] = os.stat("/proc/self/ns/net").st_ino
            self.features["ipcns_inode"] = os.stat("/proc/self/ns/ipc").st_ino

        def pidns() -> None:
            require(mounts_private, self.errors.get("mounts", "needs a private mount namespace"))
            self.features["pid_init"] = namespaces.enter_pid_namespace()

        def fsview() -> None:
            require(mounts_private, self.errors.get("mounts", "needs a private mount namespace"))
            folder = os.path.dirname(self.handler_spec["path"]) if self.handler_spec["kind"] == "file" else None
            builder = namespaces.ViewBuilder(namespaces.staging_folder([*self.read_paths, *filter(None, [folder])]))
            self.run_view = builder.build("run", self.read_paths)
            if folder is not None:
                try:
                    self.loader_view = builder.build("loader", self.read_paths, folders=[folder])
                except namespaces.HandlerFolderError as exc:
                    self.handler_folder_error = str(exc)  # the handler's fault: reported when it loads
            builder.seal()

        def seccomp() -> None:
            require(isolation.seccomp_available(), "pyseccomp/libseccomp is not installed")
            self.seccomp_program = isolation.seccomp_program()

        def landlock_ruleset() -> None:
            self.ruleset_fd, self.features["landlock_abi"] = landlock.create_read_only_ruleset(self.read_paths)

        def uid() -> None:  # CAP_KILL: the wall-clock SIGKILL of a child that runs as another uid
            require_capabilities(isolation.CAP_SETUID, isolation.CAP_SETGID, isolation.CAP_KILL)
            probe_uid = self.limits.run_uid(os.getpid())
            unreadable = namespaces.readable_by(_interpreter_paths(), probe_uid, probe_uid,
                                                self.run_view if active["fsview"] else None)
            require(unreadable is None, f"a run's uid cannot read the Python installation ({unreadable}); "
                                        "install Python where every user can read it, or enable the fsview layer")

        def capabilities() -> None:
            require_capabilities(isolation.CAP_SETPCAP)

        active["netns"] = self._try("netns", netns)
        active["pidns"] = self._try("pidns", pidns)
        active["fsview"] = self._try("fsview", fsview)
        active["seccomp"] = self._try("seccomp", seccomp)
        active["landlock"] = self._try("landlock", landlock_ruleset)
        active["uid"] = self._try("uid", uid)
        active["capabilities"] = self._try("capabilities", capabilities)
        active["rlimits"] = self._try("rlimits", lambda: None)
        self.layers = frozenset(layer for layer, on in active.items() if on)
        self.features.update(active)
        missing = sorted(set(self.limits.required_layers) - self.layers)
        self.features["missing"] = missing
        self.features["errors"] = {k: v for k, v in self.errors.items() if k in missing or k == "mounts"}
        if missing and not self.limits.allow_degraded:
            raise IsolationUnavailable(missing, "; ".join(f"{k}: {self.errors.get(k, 'unavailable')}" for k in missing))

    def _plan(self, keep_fds: tuple[int, ...], *, memory_bytes: int, cpu_seconds: int, max_open_files: int,
              max_processes: int, ruleset_fd: int | None, view_root: str | None) -> isolation.HardeningPlan:
        """The plan for a child; its uid is filled in by the child from the worker's first message."""
        return isolation.HardeningPlan(
            keep_fds=keep_fds, memory_bytes=memory_bytes, cpu_seconds=cpu_seconds,
            max_open_files=max_open_files, max_processes=max_processes, layers=self.layers,
            ruleset_fd=ruleset_fd, view_root=view_root, seccomp_program=self.seccomp_program)

    def _fork_child(self, plan: isolation.HardeningPlan, req_r: int, req_w: int, res_r: int) -> tuple[int, bytes]:
        """Fork a child and send it its uid and result key first thing: (pid, key), (0, b"") in
        the child. The key is made after the fork, so no child inherits another's."""
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(req_w)
            os.close(res_r)
            return 0, b""
        key = secrets.token_bytes(RESULT_KEY_BYTES)
        _write_all(req_w, struct.pack("<Q", self.limits.run_uid(pid)) + key)
        return pid, key

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
        from itemsmith.sandbox.executor import check_handler_folder  # same rule as the host

        check_handler_folder(Path(folder))
        if self.handler_folder_error:
            raise RuntimeError(f"the handler file failed to load: {self.handler_folder_error}")
        ruleset_fd = None
        if "landlock" in self.layers:  # in the loader's view the folder may be a copy: the view's inode
            seen_folder = self.loader_view + folder if self.loader_view is not None else folder
            ruleset_fd, _ = landlock.create_read_only_ruleset([*self.read_paths, seen_folder])
        limits = self.limits
        req_r, req_w = os.pipe()
        r, w = os.pipe()
        plan = self._plan((req_r, w), memory_bytes=limits.handler_memory_mb * MIB,
                          cpu_seconds=int(limits.handler_load_s) + 1, max_open_files=256,
                          max_processes=limits.max_processes, ruleset_fd=ruleset_fd, view_root=self.loader_view)
        pid, key = self._fork_child(plan, req_r, req_w, r)
        if pid == 0:  # pragma: no cover - runs in the loader child
            data = b"E"
            key = b""
            try:
                uid, key = _receive_setup(req_r)
                isolation.harden(dataclasses.replace(plan, uid=uid, gid=uid))
                from itemsmith.handlers.loader import load_handler_source

                source = Path(path).read_text()
                handler = load_handler_source(source, data_dir=Path(folder), filename=path)
                data = b"S" + encode_snapshot(handler, max_bytes=limits.handler_snapshot_bytes,
                                              max_records=limits.handler_max_records)
            except BaseException as exc:  # noqa: BLE001 - reported to the host
                data = b"E" + f"{type(exc).__name__}: {exc}"[:2000].encode("utf-8", "replace")
            finally:
                _write_all(w, seal_result(key, data))
                os._exit(0)
        os.close(req_r)
        os.close(req_w)
        os.close(w)
        if ruleset_fd is not None:
            os.close(ruleset_fd)
        outcome = collect_child(pid, r, time.monotonic() + limits.handler_load_s,
                                limits.handler_snapshot_bytes + MIB, key=key)
        if self.loader_view is not None:
            namespaces.discard_view(self.loader_view)
            self.loader_view = None
        payload = outcome.pop("payload")
        if outcome["timed_out"]:
            raise RuntimeError(f"loading the handler file took longer than {limits.handler_load_s:g} s")
        if outcome["oversize"]:
            raise RuntimeError("the handler's data is larger than the sandbox snapshot limit")
        if outcome["signal"]:
            raise RuntimeError(f"loading the handler file was killed by {signal.Signals(outcome['signal']).name}")
        if outcome["rejected"]:
            raise RuntimeError(f"the handler loader's result was refused: {outcome['rejected']}")
        if payload[:1] == b"S":  # decoded under the loader child's own memory limit
            try:
                with isolation.address_space_limit(limits.handler_memory_mb * MIB):
                    return decode_snapshot(payload[1:])
            except SnapshotError as exc:
                raise RuntimeError(f"the handler snapshot is invalid: {exc}") from None
            except MemoryError:
                raise RuntimeError(f"the handler's data needs more than the {limits.handler_memory_mb} MiB a handler "
                                   "may use (ITEMSMITH_SANDBOX_HANDLER_MEMORY_MB)") from None
        message = payload[1:].decode("utf-8", "replace") if payload[:1] == b"E" else "no output"
        raise RuntimeError(f"the handler file failed to load: {message}")

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
        plan = self._plan((req_r, res_w), memory_bytes=limits.memory_bytes, cpu_seconds=limits.cpu_seconds,
                          max_open_files=limits.max_open_files, max_processes=limits.max_processes,
                          ruleset_fd=self.ruleset_fd, view_root=self.run_view)
        pid, key = self._fork_child(plan, req_r, req_w, res_r)
        if pid == 0:  # pragma: no cover - runs in the sandbox child
            self._child_main(req_r, res_w, plan)
        os.close(req_r)
        os.close(res_w)
        return Child(pid, req_w, res_r, limits, key)

    def _child_main(self, req_r: int, res_w: int, plan: isolation.HardeningPlan) -> None:  # pragma: no cover
        data = b""
        key = b""
        try:
            uid, key = _receive_setup(req_r)
            isolation.harden(dataclasses.replace(plan, uid=uid, gid=uid))
            if self.limits.spare_warmup and self.view is not None:
                self._prewarm_spare(req_r)
            raw = _read_all(req_r, MAX_REQUEST_BYTES)
            if raw[:1] == b"P":  # a probe of the layers (Zygote.probe), not a template run
                data = json.dumps(isolation.observe_layers()).encode()
                return
            request = RunRequest.model_validate_json(raw)
            isolation.lower_limits(memory_bytes=request.memory_bytes, cpu_seconds=request.cpu_seconds,
                                   max_open_files=request.max_open_files, max_processes=request.max_processes)
            data = self.run_in_child(request).encode("utf-8")
        except isolation.IsolationError as exc:
            data = json.dumps({"status": "error", "error": f"sandbox isolation failed: {exc}"}).encode()
        except BaseException as exc:  # noqa: BLE001
            data = json.dumps({"status": "error", "error": f"internal sandbox error ({type(exc).__name__}: "
                                                           f"{str(exc)[:200]})"}).encode()
        finally:
            _write_all(res_w, seal_result(key, data))
            os.close(res_w)  # the worker may answer now, before this process is torn down
            os._exit(0)

    def run_in_child(self, request: RunRequest) -> str:  # pragma: no cover - runs in the sandbox child
        """The template run itself (after hardening); its envelope as JSON text."""
        return run_template_here(
            request.source, handler=self.view, num_samples=request.num_samples, seed=request.seed,
            output_bytes=request.output_bytes, print_bytes=request.print_bytes, synth=self.synth,
        )

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
                                request.output_bytes + ENVELOPE_SLACK, key=child.key, early=True,
                                while_waiting=self.prefork, waiting_after_s=PREFORK_AFTER_S)
        if outcome.pop("pending", False):
            self.zombies.append(child.pid)
        payload = outcome.pop("payload")
        rejected = outcome.pop("rejected")
        if rejected and not (outcome["timed_out"] or outcome["oversize"] or outcome["signal"]):
            # written here, by the worker: never the child's own words
            payload = json.dumps({"status": "error", "error": f"sandbox protocol violation: {rejected}"}).encode()
        outcome["elapsed_ms"] = (time.monotonic() - started) * 1000
        outcome["kind"] = "result"
        return outcome, payload

    def probe(self) -> dict[str, Any]:
        """Fork a child exactly as for a run, let it report what it sees of its confinement,
        and compare with what this worker set up: {layer: verified}."""
        child = self._spawn(self._default_limits())
        _write_all(child.req_w, b"P")
        os.close(child.req_w)
        outcome = collect_child(child.pid, child.res_r, time.monotonic() + 10, MIB, key=child.key)
        if outcome["rejected"] or outcome["signal"] or outcome["timed_out"]:
            raise RuntimeError(f"the layer probe failed: {outcome}")
        seen = json.loads(outcome["payload"])
        uid = self.limits.run_uid(child.pid)
        verified = {
            "netns": self.features.get("netns_inode") not in (None, self.host_netns)
                     and seen["ipc_namespace"] not in (None, self.features.get("ipcns_inode")),
            "pidns": seen["pid"] != child.pid,
            "fsview": not seen["etc_visible"],
            "uid": seen["uid"] == [uid] * 3 and seen["gid"] == [uid] * 3 and seen["groups"] == [] and uid != 0,
            "capabilities": seen["capabilities"] == 0 and seen["bounding"] == 0 and seen["ambient"] == 0,
            "landlock": seen["list_root"] == "EACCES",
            "seccomp": seen["seccomp_mode"] == 2 and seen["xattr"] == "EPERM" and seen["sysv_shmget"] == "EPERM",
            "rlimits": seen["address_space_limit"] != resource.RLIM_INFINITY,
        }
        return {"verified": verified, "observed": seen}

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
            if kind == "probe":
                try:
                    write_frame(out_fd, {"kind": "probe", **self.probe()})
                except Exception as exc:  # noqa: BLE001 - reported to the host
                    write_frame(out_fd, {"kind": "probe", "error": str(exc)[:2000]})
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
    key: bytes  # the key its result is sealed with


def _receive_setup(req_r: int) -> tuple[int, bytes]:  # pragma: no cover - runs in a child
    """The run's uid and result key, the first thing the worker sends a new child."""
    data = b""
    while len(data) < 8 + RESULT_KEY_BYTES:
        chunk = os.read(req_r, 8 + RESULT_KEY_BYTES - len(data))
        if not chunk:
            raise isolation.IsolationError("the worker closed the pipe before sending the run's uid")
        data += chunk
    return struct.unpack("<Q", data[:8])[0], data[8:]


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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass


def collect_child(pid: int, fd: int, deadline: float, cap: int, *, key: bytes, early: bool = False,
                  while_waiting: Any = None, waiting_after_s: float = 0.0) -> dict[str, Any]:
    """Read a child's sealed result (`protocol.seal_result`), killing it at `deadline` or past
    `cap` bytes.

    Normally waits for the child to exit and reports its exit code or signal. With `early`,
    a child that closed its pipe counts as finished at once: it is SIGKILLed (it is only
    tearing itself down) and `pending` asks the caller to reap it later. `while_waiting` is
    called once if the child is still running `waiting_after_s` seconds in. `rejected` says
    why the data is not one authentic frame (then `payload` is empty).
    """
    hook_at = time.monotonic() + waiting_after_s if while_waiting is not None else None
    chunks: list[bytes] = []
    size = 0
    timed_out = oversize = exited = eof = False
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    try:
        while not (eof and exited) and not (early and eof):
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
                if size > cap + 256:
                    oversize = True
                    break
                chunks.append(chunk)
            if not events and hook_at is not None and time.monotonic() >= hook_at:
                hook_at = None
                while_waiting()
            if oversize:
                break
            if exited and not eof:
                # the child is gone: what is left in the pipe can be read without blocking
                os.set_blocking(fd, False)
                try:
                    while size <= cap + 256:
                        chunk = os.read(fd, 1 << 16)
                        if not chunk:
                            break
                        size += len(chunk)
                        chunks.append(chunk)
                except BlockingIOError:
                    pass
                oversize = size > cap + 256
                eof = True
    finally:
        if not exited:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pending = early and eof and not exited and not timed_out and not oversize
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
    payload, rejected = b"", None
    if not oversize:
        try:
            payload = open_result(key, b"".join(chunks))
        except ResultRejected as exc:
            rejected = str(exc)
    return {"exit_code": code, "signal": sig, "timed_out": timed_out, "oversize": oversize,
            "pending": pending, "payload": payload, "rejected": rejected}


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
    except IsolationUnavailable as exc:
        write_frame(out_fd, {"kind": "isolation_unavailable", "error": str(exc)[:2000], "missing": exc.missing})
        return
    except Exception as exc:  # noqa: BLE001 - reported to the host
        detail = str(exc) if type(exc) is RuntimeError else \
            "".join(traceback.format_exception_only(type(exc), exc)).strip()
        write_frame(out_fd, {"kind": "init_error", "error": detail[:2000]})
        return
    for _ in range(SPARES if zygote.view is not None else 0):
        zygote.prefork()
    write_frame(out_fd, {"kind": "ready", "features": zygote.features, "pid": os.getpid()})
    zygote.serve(in_fd, out_fd)


if __name__ == "__main__":
    main()
