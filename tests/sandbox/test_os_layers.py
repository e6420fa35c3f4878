"""The OS layers with the policy layer bypassed completely.

A worker started from tests/sandbox/escaped_zygote.py is the real worker except that its
children run the request's source as plain Python after hardening: the state a template is in
after escaping the policy layer. Each test attacks a gap a security review of the sandbox found:

- every finding (reads and writes of host files, metadata and link targets, processes, the
  network) with all layers on, and again with Landlock or the uid drop missing (degraded
  deployments);
- each layer alone (all the others disabled) against the class of attack it is for;
- a forged result envelope written to the result pipe is not accepted as ok.

The victim files sit in a folder every uid can traverse (not pytest's 0700 tmp folder), so a
denial is the layer's doing and not an accident of the test's paths.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import ALL_LAYERS, IsolationUnavailable, SandboxLimits, check_isolation, isolation, landlock
from itemsmith.sandbox.executor import HandlerSpec, Worker, make_request
from itemsmith.sandbox.protocol import read_frame, write_frame

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not landlock.abi_version() or not isolation.seccomp_available(),
                                reason="needs root, Landlock and libseccomp (the layers under test)")

ESCAPED_ZYGOTE = Path(__file__).with_name("escaped_zygote.py")
NOBODY = 65534
HANDLER = """
import pandas as pd
class H:
    name = "h"
    description = "one record"
    def records(self):
        return pd.DataFrame({"record_id": ["a"]})
    def series(self, record_id):
        return pd.DataFrame({"value": [1.0, 2.0]})
"""


class EscapedWorker(Worker):
    """The real worker, with children that run plain Python (see escaped_zygote.py)."""

    command = ("-P", "-s", str(ESCAPED_ZYGOTE))

    def probe_source(self, source: str, wall_s: float = 20.0) -> tuple[dict[str, Any], bytes]:
        request = make_request(source, num_samples=1, seed=0, limits=self.limits).model_copy(
            update={"wall_seconds": wall_s})
        write_frame(self._in, request.model_dump(mode="json"))
        return read_frame(self._out, deadline=time.monotonic() + wall_s + 10)


@dataclass
class Victim:
    """What the service's host holds that a template must never reach."""

    root: Path
    secret: str

    @property
    def paths(self) -> dict[str, Any]:
        return {"db": str(self.root / "data" / "itemsmith.sqlite"),
                "other_upload": str(self.root / "data" / "uploads" / "other-owner" / "handler.py"),
                "xattr_file": str(self.root / "notes.txt"),
                "private_link": str(self.root / "private" / "link"),
                "nobody_file": str(self.root / "nobody.txt"),
                "owned_0600": str(self.root / "owned-0600.txt"),
                "marker": str(self.root / "data" / "marker"),
                "host_pid": os.getpid()}


@pytest.fixture()
def victim() -> Iterator[Victim]:
    root = Path(tempfile.mkdtemp(prefix="itemsmith-victim-", dir="/var/tmp"))
    secret = "victim-" + secrets.token_hex(8)
    os.chmod(root, 0o755)
    data = root / "data"
    (data / "uploads" / "other-owner").mkdir(parents=True)
    for folder in (data, data / "uploads", data / "uploads" / "other-owner"):
        os.chmod(folder, 0o755)
    (data / "itemsmith.sqlite").write_text(secret)  # 0644, as SQLite creates it under umask 022
    (data / "uploads" / "other-owner" / "handler.py").write_text(f"# {secret}\n")
    notes = root / "notes.txt"
    notes.write_text("nothing here\n")
    os.setxattr(notes, "user.secret", secret.encode())
    private = root / "private"
    private.mkdir(mode=0o700)
    os.symlink("/" + secret, private / "link")
    nobody = root / "nobody.txt"
    nobody.write_text("owned by nobody\n")
    os.chown(nobody, NOBODY, NOBODY)
    os.chmod(nobody, 0o644)
    os.utime(nobody, (1_000_000_000, 1_000_000_000))
    owned = root / "owned-0600.txt"
    owned.write_text(secret)
    os.chown(owned, 12345, 12345)
    os.chmod(owned, 0o600)
    os.environ["ITEMSMITH_VICTIM_SECRET"] = secret  # /proc/<this pid>/environ holds it
    try:
        yield Victim(root, secret)
    finally:
        os.environ.pop("ITEMSMITH_VICTIM_SECRET", None)
        shutil.rmtree(root)


ATTACKS = '''
import errno, os, socket

P = PATHS

def attempt(fn):
    try:
        value = fn()
    except BaseException as exc:
        code = errno.errorcode.get(getattr(exc, "errno", None) or 0, "")
        return type(exc).__name__ + (":" + code if code else "")
    return "ALLOWED:" + repr(value)[:300]

def read(path):
    with open(path, "rb") as fh:
        return fh.read()

def connect():
    s = socket.create_connection(("127.0.0.1", P["port"]), timeout=1)
    s.close()

def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return "forked"

def probe():
    return {
        "uid": os.getresuid(),
        "pid": os.getpid(),
        "xattr_secret": attempt(lambda: os.getxattr(P["xattr_file"], "user.secret")),
        "xattr_list": attempt(lambda: os.listxattr(P["xattr_file"])),
        "readlink_private": attempt(lambda: os.readlink(P["private_link"])),
        "chmod_nobody_file": attempt(lambda: os.chmod(P["nobody_file"], 0o777)),
        "utime_nobody_file": attempt(lambda: os.utime(P["nobody_file"], (0, 0))),
        "host_environ": attempt(lambda: read("/proc/%d/environ" % P["host_pid"])),
        "signal_host": attempt(lambda: os.kill(P["host_pid"], 0)),
        "read_db": attempt(lambda: read(P["db"])),
        "read_other_upload": attempt(lambda: read(P["other_upload"])),
        "chmod_db": attempt(lambda: os.chmod(P["db"], 0o666)),
        "delete_db": attempt(lambda: os.unlink(P["db"])),
        "write_marker": attempt(lambda: open(P["marker"], "w").write("x")),
        "read_owned_0600": attempt(lambda: read(P["owned_0600"])),
        "o_path_open": attempt(lambda: os.close(os.open(P["db"], os.O_PATH))),
        "connect": attempt(connect),
        "socket": attempt(lambda: socket.socket().close()),
        "fork": attempt(fork),
        "mount": attempt(lambda: __import__("itemsmith.sandbox.namespaces").sandbox.namespaces._mount(
            "none", "/", "tmpfs", 0, None)),
        "memory_bomb": attempt(lambda: len(bytearray(8 << 30))) if P["bomb"] else "not tried",
        "import_numpy": attempt(lambda: float(__import__("numpy").arange(4).sum())),
        "setuid_other": attempt(lambda: os.setresuid(4321, 4321, 4321)),  # last: it may succeed
    }
'''

FINDINGS = ("xattr_secret", "xattr_list", "readlink_private", "chmod_nobody_file", "utime_nobody_file", "host_environ",
            "read_db", "read_other_upload", "chmod_db", "delete_db", "write_marker")


def _attack(limits: SandboxLimits, victim: Victim, port: int = 9) -> dict[str, Any]:
    worker = EscapedWorker(HandlerSpec(kind="none"), limits)
    try:  # 8 GiB is only tried where the address-space limit is on
        paths = {**victim.paths, "port": port, "bomb": "rlimits" in worker.features and worker.features["rlimits"]}
        outcome, payload = worker.probe_source(ATTACKS.replace("PATHS", repr(paths)))
    finally:
        worker.close()
    assert outcome.get("kind") == "result" and not outcome.get("signal"), outcome
    return json.loads(payload)


def _assert_victim_untouched(victim: Victim, result: dict[str, Any]) -> None:
    assert victim.secret not in json.dumps(result), "a secret crossed the sandbox boundary"
    data = victim.root / "data"
    assert (data / "itemsmith.sqlite").read_text() == victim.secret
    assert (data / "itemsmith.sqlite").stat().st_mode & 0o777 == 0o644
    assert not (data / "marker").exists()
    nobody = (victim.root / "nobody.txt").stat()
    assert nobody.st_mode & 0o777 == 0o644 and nobody.st_mtime == 1_000_000_000


def _only(layer: str) -> SandboxLimits:
    others = tuple(name for name in ALL_LAYERS if name != layer)
    return SandboxLimits(disabled_layers=others, required_layers=(layer,))


def denied(value: str) -> bool:
    return not value.startswith("ALLOWED")


# --- every finding, all layers on, and in degraded deployments ---------------------------------

@pytest.mark.parametrize("missing", [(), ("landlock",), ("uid",), ("landlock", "uid")],
                         ids=["all-layers", "no-landlock", "no-uid-drop", "no-landlock-no-uid-drop"])
def test_review_findings_fail_with_the_policy_bypassed(victim: Victim, missing: tuple[str, ...]) -> None:
    limits = SandboxLimits(disabled_layers=missing, required_layers=tuple(set(ALL_LAYERS) - set(missing)))
    result = _attack(limits, victim)
    for key in FINDINGS:
        assert denied(result[key]), (key, result[key])
    assert result["import_numpy"] == "ALLOWED:6.0"  # Python still works: its files are readable
    assert result["memory_bomb"] == "MemoryError"
    _assert_victim_untouched(victim, result)
    if "uid" not in missing:
        assert result["uid"][0] not in (0, NOBODY) and len(set(result["uid"])) == 1


def test_runs_get_distinct_uids_and_no_capabilities(victim: Victim) -> None:
    source = ("from itemsmith.sandbox import isolation\n"
              "def probe():\n    return isolation.observe_layers()\n")
    worker = EscapedWorker(HandlerSpec(kind="none"), SandboxLimits())
    try:
        seen = [json.loads(worker.probe_source(source)[1]) for _ in range(3)]
    finally:
        worker.close()
    uids = {tuple(s["uid"]) for s in seen}
    assert len(uids) == 3 and all(u[0] >= SandboxLimits().uid_base for u in uids)
    for s in seen:  # CAP_DAC_READ_SEARCH included: the interpreter is readable without it
        assert (s["capabilities"], s["bounding"], s["ambient"], s["no_new_privs"]) == (0, 0, 0, 1)
        assert s["groups"] == [] and s["seccomp_mode"] == 2 and not s["etc_visible"]


# --- each layer alone stops its class -------------------------------------------------------------------

def test_seccomp_alone_denies_xattr_chmod_utime_links_o_path_and_processes(victim: Victim) -> None:
    result = _attack(_only("seccomp"), victim)  # root, every capability, host filesystem: only the filter
    for key in ("xattr_secret", "xattr_list", "readlink_private", "chmod_nobody_file", "utime_nobody_file",
                "chmod_db", "o_path_open", "socket", "fork", "mount"):
        assert result[key].endswith(":EPERM"), (key, result[key])
    assert result["uid"] == [0, 0, 0]  # nothing else holds: the filter did it


def test_landlock_alone_denies_reads_and_writes_outside_the_allowed_folders(victim: Victim) -> None:
    result = _attack(_only("landlock"), victim)
    for key in ("read_db", "read_other_upload", "delete_db", "write_marker", "host_environ", "read_owned_0600"):
        assert result[key] == "PermissionError:EACCES", (key, result[key])
    assert result["uid"] == [0, 0, 0]
    assert (victim.root / "data" / "itemsmith.sqlite").read_text() == victim.secret
    # the gaps the review found in Landlock (closed by seccomp, fsview and the uid): metadata and link targets
    for key in ("xattr_secret", "readlink_private", "chmod_db", "utime_nobody_file"):
        assert not denied(result[key]), (key, result[key])


def test_fsview_alone_shows_nothing_of_the_host(victim: Victim) -> None:
    result = _attack(_only("fsview"), victim)
    for key in ("xattr_secret", "readlink_private", "chmod_nobody_file", "utime_nobody_file", "host_environ",
                "read_db", "read_other_upload", "chmod_db", "delete_db", "write_marker", "read_owned_0600"):
        assert result[key].endswith(":ENOENT"), (key, result[key])
    assert result["import_numpy"] == "ALLOWED:6.0"
    _assert_victim_untouched(victim, result)


def _python_readable_by_others() -> bool:
    path = Path(os.__file__).parent
    return all(os.stat(p).st_mode & 0o005 == 0o005 for p in [path, *path.parents])


def test_uid_without_fsview_refuses_when_python_is_unreadable() -> None:
    """No CAP_DAC_READ_SEARCH is kept for an unreadable interpreter any more."""
    if _python_readable_by_others():
        pytest.skip("this Python installation is readable by every uid")
    with pytest.raises(IsolationUnavailable, match="cannot read the Python installation") as info:
        Worker(HandlerSpec(kind="none"), _only("uid"))
    assert info.value.missing == ["uid"]


@pytest.mark.skipif(not _python_readable_by_others(), reason="the uid alone needs a Python every uid can read "
                                                             "(here it sits under a 0700 folder; see the test above)")
def test_uid_alone_denies_other_owners_files(victim: Victim) -> None:
    os.chmod(victim.root / "data" / "itemsmith.sqlite", 0o600)  # the deployment keeps the database private
    os.chmod(victim.root / "data" / "uploads" / "other-owner", 0o700)
    result = _attack(_only("uid"), victim)
    for key in ("readlink_private", "chmod_nobody_file", "utime_nobody_file", "host_environ", "read_db",
                "read_other_upload", "chmod_db", "delete_db", "write_marker", "read_owned_0600", "setuid_other"):
        assert result[key].startswith("PermissionError"), (key, result[key])
    assert result["uid"][0] not in (0, NOBODY)
    os.chmod(victim.root / "data" / "itemsmith.sqlite", 0o644)
    _assert_victim_untouched(victim, result)


def test_capabilities_alone_leave_root_without_privilege(victim: Victim) -> None:
    result = _attack(_only("capabilities"), victim)
    assert result["uid"] == [0, 0, 0]
    for key in ("read_owned_0600", "chmod_nobody_file", "mount", "setuid_other"):
        assert result[key].endswith((":EPERM", ":EACCES")), (key, result[key])


def test_pidns_alone_hides_host_processes(victim: Victim) -> None:
    result = _attack(_only("pidns"), victim)
    assert result["host_environ"] == "FileNotFoundError:ENOENT"
    assert result["signal_host"] == "ProcessLookupError:ESRCH"
    assert result["pid"] != os.getpid() and result["pid"] < 100


def test_netns_alone_cuts_the_network(victim: Victim, canaries) -> None:
    result = _attack(_only("netns"), victim, port=canaries.port)
    assert result["socket"] == "ALLOWED:None"  # only the namespace is in the way
    assert denied(result["connect"])
    assert canaries.connections == []


def test_rlimits_alone_stop_a_memory_bomb(victim: Victim) -> None:
    result = _attack(_only("rlimits"), victim)
    assert result["memory_bomb"] == "MemoryError"


# --- host facts, secret memory, dumpable again, signals through an fd's owner, calls newer than libseccomp----------------------

# x86_64 numbers, called through syscall(2) so that libc adds nothing; "high" variants set bits
# above the 32 the kernel reads of prctl's option and fcntl/ioctl's command
HOST_CALLS = '''
import ctypes, errno, os

libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long

def call(number, *args):
    ctypes.set_errno(0)
    res = libc.syscall(L(number), *(L(a) for a in args))
    return "ALLOWED" if res >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")

def sysinfo():
    buffer = ctypes.create_string_buffer(256)
    res = call(99, ctypes.addressof(buffer))
    return res + ("" if buffer.raw == bytes(256) else ":FILLED")

def text(value):
    return ctypes.addressof(ctypes.create_string_buffer(value))

def probe():
    r, w = os.pipe()
    high = 1 << 32
    return {
        # newer than the libseccomp that names the others (refused by number): on this kernel an
        # allowed call fails on its NULL arguments (EFAULT, EINVAL), never with EPERM
        "getxattrat": call(464, -100, text(b"/"), 0, text(b"user.none"), 0, 0),
        "listmount": call(458, 0, 0, 0, 0),
        "file_setattr": call(469, -100, text(b"/"), 0, 0, 0),
        "sysinfo": sysinfo(),
        "memfd_secret": call(447, 0),
        "prctl_set_dumpable": call(157, 4, 1, 0, 0, 0),
        "prctl_set_dumpable_high_bits": call(157, high | 4, 1, 0, 0, 0),
        "prctl_set_ptracer": call(157, 0x59616D61, -1, 0, 0, 0),
        "fcntl_setown": call(72, w, 8, 1),
        "fcntl_setown_high_bits": call(72, w, high | 8, 1),
        "fcntl_setown_ex": call(72, w, 15, 0),
        "ioctl_fiosetown": call(16, w, 0x8901, 0),
        # what ordinary code does with the same calls still works
        "dumpable_after": libc.prctl(3, 0, 0, 0, 0),  # PR_GET_DUMPABLE
        "prctl_set_name": call(157, 15, ctypes.addressof(ctypes.create_string_buffer(b"worker")), 0, 0, 0),
        "fcntl_getfl": call(72, w, 3, 0),
        "fcntl_getown": call(72, w, 9, 0),
    }
'''
HOST_CALL_KEYS = ("getxattrat", "listmount", "file_setattr", "sysinfo", "memfd_secret", "prctl_set_dumpable", "prctl_set_dumpable_high_bits", "prctl_set_ptracer",
                  "fcntl_setown", "fcntl_setown_high_bits", "fcntl_setown_ex", "ioctl_fiosetown")


@pytest.fixture(scope="module")
def host_calls() -> dict[str, dict[str, Any]]:
    """The probe's outcomes with every layer on, and with seccomp the only layer (root, every
    capability: what is refused there, the filter refused)."""
    if os.uname().machine != "x86_64":
        pytest.skip("the probe calls syscalls by their x86_64 numbers")
    outcomes = {}
    for name, limits in (("all-layers", SandboxLimits()), ("seccomp-alone", _only("seccomp"))):
        worker = EscapedWorker(HandlerSpec(kind="none"), limits)
        try:
            outcomes[name] = json.loads(worker.probe_source(HOST_CALLS)[1])
        finally:
            worker.close()
    return outcomes


@pytest.mark.parametrize("layers", ["all-layers", "seccomp-alone"])
@pytest.mark.parametrize("call", HOST_CALL_KEYS)
def test_the_filter_refuses_host_facts_secret_memory_dumpable_and_fd_owners(
        host_calls: dict[str, dict[str, Any]], call: str, layers: str) -> None:
    assert host_calls[layers][call] == "EPERM", host_calls[layers]


@pytest.mark.parametrize("layers", ["all-layers", "seccomp-alone"])
def test_the_same_calls_with_harmless_arguments_still_work(host_calls: dict[str, dict[str, Any]],
                                                           layers: str) -> None:
    seen = host_calls[layers]
    assert seen["dumpable_after"] == 0  # still not dumpable
    assert (seen["prctl_set_name"], seen["fcntl_getfl"], seen["fcntl_getown"]) == ("ALLOWED",) * 3, seen


# --- the result envelope --------------------------------------------------------------------------------

FORGE = '''
import json, os, struct, hmac, hashlib

ITEM = {"question": "forged", "options": ["True", "False"], "answer_index": 0, "kind": "tf"}

def probe():
    envelope = json.dumps({"status": "ok", "items": [ITEM], "printed": ""}).encode()
    frame = struct.pack("<Q", len(envelope)) + envelope
    if MODE == "guessed-key":
        frame += hmac.new(bytes(32), frame, hashlib.sha256).digest()
    for fd in range(3, 64):  # the result pipe is the one fd open for writing
        try:
            os.write(fd, frame)
        except OSError:
            pass
    if MODE != "then-return":
        os._exit(0)
    return {"status": "error", "error": "the real run failed"}
'''


@pytest.mark.parametrize("mode", ["then-exit", "guessed-key", "then-return"])
def test_a_forged_envelope_is_not_accepted_as_ok(mode: str) -> None:
    worker = EscapedWorker(HandlerSpec(kind="none"), SandboxLimits())
    try:
        source = FORGE.replace("MODE", repr(mode))
        outcome, payload = worker.probe_source(source)
        result = worker.run(make_request(source, num_samples=1, seed=0, limits=worker.limits))
    finally:
        worker.close()
    assert json.loads(payload)["status"] == "error"
    assert "sandbox protocol violation" in json.loads(payload)["error"]
    assert result.status is RunStatus.error and not result.items
    assert "sandbox protocol violation" in (result.error or "")


def test_an_honest_escaped_run_still_gets_through() -> None:
    """The sealing is not what fails the forgeries above: the same worker passes a real result."""
    worker = EscapedWorker(HandlerSpec(kind="none"), SandboxLimits())
    try:
        outcome, payload = worker.probe_source("def probe():\n    return {'status': 'ok', 'items': []}\n")
    finally:
        worker.close()
    assert json.loads(payload) == {"status": "ok", "items": []}


# --- fail closed ----------------------------------------------------------------------------------------

def test_a_missing_required_layer_refuses_to_start() -> None:
    with pytest.raises(IsolationUnavailable) as info:
        Worker(HandlerSpec(kind="none"), SandboxLimits(disabled_layers=("landlock",)))
    assert info.value.missing == ["landlock"]


def test_allow_degraded_starts_and_says_which_layers_are_missing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="itemsmith.sandbox.executor"):
        worker = Worker(HandlerSpec(kind="none"), SandboxLimits(disabled_layers=("seccomp", "pidns"),
                                                                  allow_degraded=True))
    worker.close()
    assert worker.features["missing"] == ["pidns", "seccomp"] and worker.features["landlock"]
    assert "WITHOUT these isolation layers: pidns, seccomp" in caplog.text


def test_the_service_start_up_check_reports_and_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    report = check_isolation(SandboxLimits())
    assert report.active == list(ALL_LAYERS) and report.verified == list(ALL_LAYERS) and report.missing == []
    with pytest.raises(IsolationUnavailable, match="seccomp"):
        check_isolation(SandboxLimits(disabled_layers=("seccomp",)))
    degraded = check_isolation(SandboxLimits(disabled_layers=("seccomp",), allow_degraded=True))
    assert degraded.missing == ["seccomp"] and "MISSING: seccomp" in degraded.summary()


def test_serve_refuses_to_start_without_a_required_layer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import uvicorn
    from typer.testing import CliRunner

    from itemsmith.cli.app import app

    started: list = []
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: started.append(a))
    monkeypatch.setenv("ITEMSMITH_SANDBOX_DISABLED_LAYERS", '["landlock"]')
    result = CliRunner().invoke(app, ["serve", "--db", f"sqlite:///{tmp_path / 'bank.sqlite'}"])
    assert result.exit_code == 1 and started == []
    assert "required sandbox isolation layers unavailable: landlock" in result.output
    assert not (tmp_path / "bank.sqlite").exists()  # refused before touching the database


def _served_app(tmp_path: Path) -> Any:
    from itemsmith.api.app import create_app
    from itemsmith.api.settings import ApiSettings
    from itemsmith.service.jobs import upgrade_database

    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade_database(url)
    return create_app(ApiSettings(database_url=url, uploads_dir=tmp_path / "uploads", job_runner="inprocess"))


def test_health_reports_the_active_and_missing_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi.testclient import TestClient

    app = _served_app(tmp_path)
    with TestClient(app) as client:
        body = client.get("/health").json()
        assert body["status"] == "ok" and body["sandbox"]["active"] == list(ALL_LAYERS)
        assert body["sandbox"]["missing"] == []
        monkeypatch.setenv("ITEMSMITH_SANDBOX_DISABLED_LAYERS", '["seccomp"]')
        monkeypatch.setenv("ITEMSMITH_SANDBOX_ALLOW_DEGRADED", "1")  # a service an operator let start degraded
        body = client.get("/health").json()
        assert body["status"] == "sandbox-degraded" and body["sandbox"]["missing"] == ["seccomp"]
        assert "seccomp" not in body["sandbox"]["active"] and body["sandbox"]["allow_degraded"] is True


def test_a_missing_layer_during_a_request_is_503_not_422(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from itemsmith.sandbox import run_template

    app = _served_app(tmp_path)

    @app.get("/test-run")
    def run() -> dict[str, str]:  # what any route running a template does
        result = run_template("def question(n):\n    return []\n", "synthetic",
                              limits=SandboxLimits(disabled_layers=("landlock",)))
        return {"status": result.status.value}

    with TestClient(app) as client:
        response = client.get("/test-run")
    assert response.status_code == 503
    assert "required sandbox isolation layers unavailable: landlock" in response.json()["detail"]


# --- SysV IPC does not outlive a child ------------------------------------------------------------
#
# A handler file (unrestricted Python in the loader child) or an escaped template created SysV shared
# memory, queues and semaphore sets in the worker's IPC namespace: they stayed for the worker's lifetime,
# outside every rlimit, and later children could attach. Now each child has an IPC namespace of its own
# (layer netns: freed when it exits) and seccomp refuses the calls; each layer holds on its own.

SYSV = '''
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY, SIZE, IPC_CREAT = KEY_VALUE, 64 << 20, 0o1000
FAILED_ATTACH = ctypes.c_void_p(-1).value

def code(result):
    return result if result >= 0 else "E" + errno.errorcode.get(ctypes.get_errno(), "?")

def create():
    """Make a 64 MiB segment (touched: real memory), a queue and a semaphore set under KEY, left behind."""
    shm = libc.shmget(KEY, SIZE, IPC_CREAT | 0o666)
    out = {"shm": code(shm), "msg": code(libc.msgget(KEY, IPC_CREAT | 0o666)),
           "sem": code(libc.semget(KEY, 1, IPC_CREAT | 0o666))}
    if shm >= 0:
        address = libc.shmat(shm, None, 0)
        if address not in (None, FAILED_ATTACH):
            ctypes.memset(address, 0x5A, SIZE)
            out["touched"] = True
    return out

def attach():
    """What a later child (another uid) finds under KEY."""
    shm = libc.shmget(KEY, 0, 0)
    out = {"shm": code(shm), "msg": code(libc.msgget(KEY, 0)), "sem": code(libc.semget(KEY, 0, 0))}
    if shm >= 0:
        address = libc.shmat(shm, None, 0)
        out["shm_first_byte"] = ctypes.c_ubyte.from_address(address).value if address not in (None, FAILED_ATTACH) else None
    return out
'''


def _sysv(key: int) -> str:
    return SYSV.replace("KEY_VALUE", hex(key))


def _sysv_keys(ipc_namespace: str | None = None) -> dict[str, set[int]]:
    """The keys of every SysV object in an IPC namespace (this process's, or the one at that path)."""
    command = ["sh", "-c", "for f in shm msg sem; do echo \"= $f\"; cat /proc/sysvipc/$f; done"]
    if ipc_namespace is not None:
        command = ["nsenter", f"--ipc={ipc_namespace}", *command]
    text = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    keys: dict[str, set[int]] = {}
    kind = ""
    for line in text.splitlines():
        if line.startswith("= "):
            kind = line[2:]
            keys[kind] = set()
        elif line.split() and line.split()[0].lstrip("-").isdigit():
            keys[kind].add(int(line.split()[0]))
    return keys


def _worker_ipc(worker: Worker) -> str:
    return f"/proc/{worker.process.pid}/ns/ipc"


@pytest.fixture()
def sysv_key() -> Iterator[int]:
    """A fresh key; whatever a failing layer let a child leave under it in the host's namespace
    (a worker without netns shares it) is removed afterwards."""
    key = int.from_bytes(secrets.token_bytes(3), "big") + 0x1000000
    yield key
    for flag in ("-M", "-Q", "-S"):
        subprocess.run(["ipcrm", flag, hex(key)], capture_output=True, check=False)


@pytest.mark.parametrize("layers", ["all", "netns-alone", "seccomp-alone"])
def test_sysv_ipc_of_one_child_is_gone_for_the_next(layers: str, sysv_key: int) -> None:
    key = sysv_key
    limits = {"all": SandboxLimits(), "netns-alone": _only("netns"), "seccomp-alone": _only("seccomp")}[layers]
    worker = EscapedWorker(HandlerSpec(kind="none"), limits)
    try:
        made = json.loads(worker.probe_source(_sysv(key) + "def probe():\n    return create()\n")[1])
        worker_after = _sysv_keys(_worker_ipc(worker))
        found = json.loads(worker.probe_source(_sysv(key) + "def probe():\n    return attach()\n")[1])
    finally:
        worker.close()
    if layers == "netns-alone":  # the calls work, inside a namespace that dies with the child
        assert all(isinstance(made[kind], int) for kind in ("shm", "msg", "sem")) and made["touched"], made
        assert found == {"shm": "EENOENT", "msg": "EENOENT", "sem": "EENOENT"}, found
    else:
        assert made == {"shm": "EEPERM", "msg": "EEPERM", "sem": "EEPERM"}, made
        assert found == {"shm": "EEPERM", "msg": "EEPERM", "sem": "EEPERM"}, found
    if layers != "seccomp-alone":  # without netns the worker shares the host's namespace (postgres, ...)
        assert worker_after == {"shm": set(), "msg": set(), "sem": set()}, worker_after
    assert all(key not in keys for keys in worker_after.values()), worker_after
    assert all(key not in keys for keys in _sysv_keys().values())


def test_without_both_layers_sysv_ipc_persists_between_children(sysv_key: int) -> None:
    """Control: with the per-child IPC namespace and the seccomp rule both off, the attack
    works (a later child, of another uid, attaches to the first one's segment and reads what it
    wrote), so the tests above can fail."""
    key = sysv_key
    limits = SandboxLimits(disabled_layers=("netns", "seccomp"),
                           required_layers=tuple(set(ALL_LAYERS) - {"netns", "seccomp"}))
    worker = EscapedWorker(HandlerSpec(kind="none"), limits)
    try:
        made = json.loads(worker.probe_source(_sysv(key) + "def probe():\n    return create()\n")[1])
        found = json.loads(worker.probe_source(_sysv(key) + "def probe():\n    return attach()\n")[1])
    finally:
        worker.close()
    assert isinstance(made["shm"], int) and made["touched"], made
    assert isinstance(found["shm"], int) and found["shm_first_byte"] == 0x5A, found
    assert all(key in keys for keys in _sysv_keys().values())  # in the host's namespace, until removed


HANDLER_MAKING_SEGMENTS = '''
import pandas as pd
SYSV_CODE
made = create()

class Leaky:
    name = "leaky"
    description = "makes SysV objects while it loads"
    def records(self):
        return pd.DataFrame({"record_id": ["a"], "made": [repr(sorted(made.items()))]})
    def series(self, record_id):
        return pd.DataFrame({"value": [1.0, 2.0]})
'''


@pytest.mark.parametrize("layers", ["all", "no-seccomp", "no-netns"])
def test_a_handler_file_leaves_no_sysv_ipc_in_the_worker(tmp_path: Path, layers: str, sysv_key: int) -> None:
    key = sysv_key
    folder = tmp_path / "leaky"
    folder.mkdir()
    path = folder / "leaky_handler.py"
    path.write_text(HANDLER_MAKING_SEGMENTS.replace("SYSV_CODE", _sysv(key)))
    off = {"all": (), "no-seccomp": ("seccomp",), "no-netns": ("netns",)}[layers]
    limits = SandboxLimits(disabled_layers=off, required_layers=tuple(set(ALL_LAYERS) - set(off)))
    worker = Worker(HandlerSpec.parse(str(path)), limits)
    try:
        remaining = _sysv_keys(_worker_ipc(worker))
        result = worker.run(make_request("def question(n):\n    return [tf_item(handler.records()['made'][0], True)]\n",
                                         num_samples=1, seed=0, limits=limits))
    finally:
        worker.close()
    assert result.status is RunStatus.ok, result.error
    made = result.items[0]["question"]
    if layers == "no-seccomp":  # the loader's own namespace took them, and went with it
        assert "('shm', " in made and "'shm', 'E" not in made and "('touched', True)" in made, made
    else:
        assert made == "[('msg', 'EEPERM'), ('sem', 'EEPERM'), ('shm', 'EEPERM')]", made
    if layers != "no-netns":
        assert remaining == {"shm": set(), "msg": set(), "sem": set()}, remaining
    assert all(key not in keys for keys in remaining.values()), remaining
    assert all(key not in keys for keys in _sysv_keys().values())


def test_shm_open_files_are_out_of_reach(victim: Victim) -> None:
    """POSIX shared memory is a file in /dev/shm: not in the view, and Landlock refuses it alone."""
    source = ("import os\n"
              "def probe():\n"
              "    try:\n"
              "        os.close(os.open('/dev/shm/itemsmith-probe', os.O_CREAT | os.O_RDWR, 0o600))\n"
              "    except OSError as exc:\n"
              "        return type(exc).__name__\n"
              "    return 'ALLOWED'\n")
    for limits in (SandboxLimits(), _only("landlock"), _only("fsview")):
        worker = EscapedWorker(HandlerSpec(kind="none"), limits)
        try:
            outcome = json.loads(worker.probe_source(source)[1])
        finally:
            worker.close()
        assert outcome != "ALLOWED", limits.disabled_layers
    assert not os.path.exists("/dev/shm/itemsmith-probe")


def test_the_probe_verifies_the_ipc_namespace_and_the_seccomp_rule() -> None:
    worker = EscapedWorker(HandlerSpec(kind="none"), SandboxLimits())
    try:
        probe = worker.probe()
    finally:
        worker.close()
    seen = probe["observed"]
    assert probe["verified"]["netns"] and probe["verified"]["seccomp"], probe
    assert seen["sysv_shmget"] == "EPERM"
    assert seen["ipc_namespace"] != os.stat("/proc/self/ns/ipc").st_ino
