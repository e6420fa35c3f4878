"""The isolation layer on its own: plain, unrestricted Python in a hardened child.

These tests assume the policy layer has been bypassed completely (as a native exploit or a
policy bug would) and check what the process isolation still stops. They fork the test
process, harden the child as a worker does (the per-child layers: uid, capabilities, Landlock,
seccomp, rlimits; the namespaces a worker enters once are in test_os_layers.py), run a probe
and report back as JSON.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import ALL_LAYERS, SandboxError, SandboxLimits, SandboxPool, isolation, landlock
from itemsmith.sandbox.executor import WORKER_ENV
from itemsmith.sandbox.zygote import SPARES, _read_paths

from ..support import wait_until

ROOT = os.geteuid() == 0
UID = GID = SandboxLimits().run_uid(os.getpid())
CHILD_LAYERS = frozenset({"uid", "capabilities", "landlock", "seccomp", "rlimits"} if ROOT
                         else {"landlock", "seccomp", "rlimits"})
pytestmark = pytest.mark.skipif(not landlock.abi_version() or not isolation.seccomp_available(),
                                reason="needs Landlock and libseccomp")


_PROGRAM = isolation.seccomp_program() if isolation.seccomp_available() else None


def _plan(keep_fd: int, **overrides: Any) -> isolation.HardeningPlan:
    fd, _ = landlock.create_read_only_ruleset(_read_paths())
    fields: dict[str, Any] = {
        "seccomp_program": _PROGRAM, "layers": CHILD_LAYERS,
        "keep_fds": (keep_fd,), "memory_bytes": 256 << 20, "cpu_seconds": 5, "max_open_files": 64,
        "max_processes": 64, "ruleset_fd": fd, "uid": UID if ROOT else None, "gid": GID if ROOT else None,
    }
    fields.update(overrides)
    return isolation.HardeningPlan(**fields)


def in_hardened_child(probe: Callable[[], dict[str, Any]], timeout: float = 20.0,
                      **plan: Any) -> tuple[dict[str, Any] | None, int | None]:
    """Run `probe` in a forked, hardened child: (its JSON result, terminating signal)."""
    r, w = os.pipe()
    hardening = _plan(w, **plan)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        data = b"{}"
        try:
            isolation.harden(hardening)
            data = json.dumps(probe()).encode()
        except BaseException as exc:  # noqa: BLE001
            data = json.dumps({"harden_error": repr(exc)}).encode()
        finally:
            try:
                os.write(w, data)
            finally:
                os._exit(0)
    os.close(w)
    if hardening.ruleset_fd is not None:
        os.close(hardening.ruleset_fd)
    try:
        _, status = wait_until(lambda: (reaped := os.waitpid(pid, os.WNOHANG))[0] and reaped,
                               "the hardened child to finish", timeout)
    except AssertionError:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    raw = os.read(r, 1 << 20)
    os.close(r)
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return (json.loads(raw) if raw else None), sig


def attempt(fn: Callable[[], Any]) -> str:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return type(exc).__name__ + (f":{exc.errno}" if isinstance(exc, OSError) else "")
    return "ALLOWED"


def test_escapes_fail_with_the_policy_bypassed(canaries) -> None:
    secret_file, marker_dir, port = str(canaries.secret_file), str(canaries.marker_dir), canaries.port

    def probe() -> dict[str, Any]:
        import socket
        import subprocess
        import threading

        libc = ctypes.CDLL(None, use_errno=True)

        def check(rc: int) -> None:
            if rc != 0:
                raise OSError(ctypes.get_errno(), "failed")

        def connect() -> None:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                pass

        def thread() -> None:
            t = threading.Thread(target=lambda: None)
            t.start()
            t.join()

        return {
            "read_secret": attempt(lambda: open(secret_file).read()),
            "read_passwd": attempt(lambda: open("/etc/passwd").read()),
            "read_environ": attempt(lambda: open("/proc/self/environ").read()),
            "read_parent_environ": attempt(lambda: open(f"/proc/{os.getppid()}/environ").read()),
            "list_tmp": attempt(lambda: os.listdir("/tmp")),
            "list_root": attempt(lambda: os.listdir("/root")),
            "write_marker": attempt(lambda: open(os.path.join(marker_dir, "m"), "w").write("x")),
            "mkdir_marker": attempt(lambda: os.mkdir(os.path.join(marker_dir, "d"))),
            "write_devshm": attempt(lambda: open("/dev/shm/itemsmith-marker", "w").write("x")),
            "socket": attempt(lambda: socket.socket()),
            "connect_loopback": attempt(connect),
            "unix_socket": attempt(lambda: socket.socket(socket.AF_UNIX)),
            "fork": attempt(os.fork),
            "exec": attempt(lambda: subprocess.run(["/bin/true"], check=True)),
            "execv": attempt(lambda: os.execv("/bin/true", ["true"])),
            "kill_parent": attempt(lambda: os.kill(os.getppid(), 0)),
            "kill_init": attempt(lambda: os.kill(1, 0)),
            "kill_group": attempt(lambda: os.kill(0, 0)),
            "kill_self": attempt(lambda: os.kill(os.getpid(), 0)),
            "ptrace_parent": attempt(lambda: check(libc.ptrace(16, os.getppid(), 0, 0))),
            "unshare": attempt(lambda: check(libc.unshare(0x40000000))),
            "mount": attempt(lambda: check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))),
            "setuid_root": attempt(lambda: os.setuid(0)),
            "chroot": attempt(lambda: os.chroot("/")),
            "io_uring": attempt(lambda: check(libc.syscall(425, 8, ctypes.c_void_p(0)))),
            "bpf": attempt(lambda: check(libc.syscall(321, 0, 0, 0))),
            "thread": attempt(thread),
            "uid": os.getuid(),
            "gid": os.getgid(),
            "groups": os.getgroups(),
            "import_numpy_ok": attempt(lambda: __import__("numpy").zeros(3).sum()),
        }

    result, sig = in_hardened_child(probe)
    assert sig is None and result is not None and "harden_error" not in result, result
    denied = {k: v for k, v in result.items() if isinstance(v, str) and v != "ALLOWED"}
    for key in ("read_secret", "read_passwd", "read_environ", "read_parent_environ", "list_tmp", "list_root",
                "write_marker", "mkdir_marker", "write_devshm", "socket", "connect_loopback", "unix_socket", "fork",
                "exec", "execv", "kill_parent", "kill_init", "kill_group", "ptrace_parent", "unshare", "mount",
                "setuid_root", "chroot", "io_uring", "bpf"):
        assert key in denied, (key, result[key])
    assert result["kill_self"] != "ALLOWED"  # no signals at all, not even to itself
    assert result["thread"] == "ALLOWED"  # documented: threads die with the process
    assert result["import_numpy_ok"] == "ALLOWED"
    if ROOT:
        assert (result["uid"], result["gid"], result["groups"]) == (UID, GID, [])
    canaries.assert_untouched()


def test_capabilities_are_dropped() -> None:
    def probe() -> dict[str, Any]:
        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

        header, data = Header(0x20080522, 0), (Data * 2)()
        ctypes.CDLL(None).capget(ctypes.byref(header), ctypes.byref(data))
        return {"effective": data[0].effective | (data[1].effective << 32),
                "permitted": data[0].permitted | (data[1].permitted << 32),
                "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0),
                "no_new_privs": ctypes.CDLL(None).prctl(39, 0, 0, 0, 0)}

    result, _ = in_hardened_child(probe)
    assert result is not None
    assert result["effective"] == 0 and result["permitted"] == 0  # CAP_DAC_READ_SEARCH included
    assert result["dumpable"] == 0 and result["no_new_privs"] == 1


@pytest.mark.skipif(not ROOT, reason="dropping to a uid needs root")
def test_uid_alone_denies_other_owners_files() -> None:
    """The uid layer with every other one off (modules are loaded already in a forked child,
    so the interpreter's own files need not be readable here; the worker checks that)."""
    tmp_path = Path(tempfile.mkdtemp(prefix="itemsmith-uid-", dir="/var/tmp"))  # every uid can traverse it
    try:
        _uid_alone(tmp_path)
    finally:
        shutil.rmtree(tmp_path)


def _uid_alone(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    db = tmp_path / "itemsmith.sqlite"
    db.write_text("secret")
    os.chmod(db, 0o600)
    nobody = tmp_path / "nobody.txt"
    nobody.write_text("x")
    os.chown(nobody, 65534, 65534)
    os.utime(nobody, (1_000_000_000, 1_000_000_000))
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.symlink("/the-target", private / "link")
    victim_root = str(tmp_path)

    def probe() -> dict[str, Any]:
        return {"read_db": attempt(lambda: open(f"{victim_root}/itemsmith.sqlite").read()),
                "delete_db": attempt(lambda: os.unlink(f"{victim_root}/itemsmith.sqlite")),
                "chmod_db": attempt(lambda: os.chmod(f"{victim_root}/itemsmith.sqlite", 0o666)),
                "chmod_nobody": attempt(lambda: os.chmod(f"{victim_root}/nobody.txt", 0o777)),
                "utime_nobody": attempt(lambda: os.utime(f"{victim_root}/nobody.txt", (0, 0))),
                "readlink_private": attempt(lambda: os.readlink(f"{victim_root}/private/link")),
                "parent_environ": attempt(lambda: open(f"/proc/{os.getppid()}/environ").read()),
                "uid": os.getresuid()}

    result, _ = in_hardened_child(probe, layers=frozenset({"uid"}), ruleset_fd=None, seccomp_program=None)
    assert result is not None and result["uid"] == [UID] * 3, result
    for key in ("read_db", "delete_db", "chmod_db", "chmod_nobody", "utime_nobody", "readlink_private",
                "parent_environ"):
        assert result[key].startswith("PermissionError"), (key, result[key])
    assert db.read_text() == "secret" and db.stat().st_mode & 0o777 == 0o600
    assert nobody.stat().st_mtime == 1_000_000_000


def test_memory_limit() -> None:
    def probe() -> dict[str, Any]:
        return {"alloc": attempt(lambda: bytearray(512 << 20)), "small": attempt(lambda: bytearray(16 << 20))}

    result, _ = in_hardened_child(probe, memory_bytes=128 << 20)
    assert result == {"alloc": "MemoryError", "small": "ALLOWED"}


def test_file_size_and_open_file_limits() -> None:
    def probe() -> dict[str, Any]:
        import resource

        return {"fsize": resource.getrlimit(resource.RLIMIT_FSIZE), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
                "core": resource.getrlimit(resource.RLIMIT_CORE),
                "many_fds": attempt(lambda: [os.open("/dev/null", os.O_RDONLY) for _ in range(100)])}

    result, _ = in_hardened_child(probe, max_open_files=32)
    assert result is not None
    assert result["fsize"] == [0, 0] and result["nofile"] == [32, 32] and result["core"] == [0, 0]
    assert result["many_fds"] != "ALLOWED"


def test_cpu_limit_kills_a_busy_loop() -> None:
    def probe() -> dict[str, Any]:
        while True:
            pass

    result, sig = in_hardened_child(probe, cpu_seconds=1)
    assert result is None and sig in (signal.SIGXCPU, signal.SIGKILL)


def test_native_crash_stays_in_the_child() -> None:
    def probe() -> dict[str, Any]:
        ctypes.string_at(0)
        return {}

    result, sig = in_hardened_child(probe)
    assert result is None and sig == signal.SIGSEGV


def test_required_feature_missing_refuses_to_run() -> None:
    def probe() -> dict[str, Any]:
        return {"ran": True}

    result, _ = in_hardened_child(probe, ruleset_fd=None)
    assert result is not None and "Landlock" in result.get("harden_error", "")


# --- the worker process -----------------------------------------------------------------------

@pytest.mark.skipif(not ROOT, reason="the namespaces and the uid drop need root")
def test_pool_reports_every_layer_active(pool) -> None:
    features = pool.features
    assert all(features[layer] for layer in ALL_LAYERS), features
    assert features["missing"] == [] and features["warmup"] == "ok"


def test_worker_environment_is_scrubbed(pool, canaries) -> None:
    assert os.environ["ITEMSMITH_CANARY_SECRET"] == canaries.secret
    pids = pool.worker_pids()
    assert pids
    for pid in pids:
        environ = Path(f"/proc/{pid}/environ").read_bytes().decode()
        assert canaries.secret not in environ
        names = {entry.split("=", 1)[0] for entry in environ.split("\0") if entry}
        assert names <= set(WORKER_ENV)
        fds = os.listdir(f"/proc/{pid}/fd")
        # 0-2 (/dev/null), the two protocol pipes, the Landlock ruleset, its /proc/self/statm (its
        # memory while it decodes a handler's data), two pipes per spare child
        assert len(fds) <= 7 + 2 * SPARES, fds
    probe = pool.run("def question(n):\n    return [tf_item(str(len(handler.name)), True)]\n", num_samples=1)
    assert probe.status is RunStatus.ok


def test_worker_is_in_its_own_network_namespace(pool) -> None:
    if not ROOT:
        pytest.skip("network namespaces need root")
    pid = pool.worker_pids()[0]
    assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")


# --- a user's handler file is user code: it runs hardened too --------------------------------------------

MALICIOUS_HANDLERS = {
    "reads_secret_file": """
import pandas as pd
SECRET = open("SECRET_FILE").read()
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"], "s": [SECRET]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
    "reads_environment": """
import os
import pandas as pd
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"], "s": [os.environ["ITEMSMITH_CANARY_SECRET"]]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
    "writes_marker": """
import pandas as pd
open("MARKER_DIR/handler", "w").write("x")
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
    "connects": """
import socket
import pandas as pd
socket.create_connection(("127.0.0.1", LOOPBACK_PORT), timeout=2)
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
    "spawns": """
import subprocess
import pandas as pd
subprocess.run(["touch", "MARKER_DIR/spawned"])
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
    "hangs": """
import pandas as pd
while True:
    pass
class H:
    def records(self):
        return pd.DataFrame({"record_id": ["a"]})
    def series(self, rid):
        return pd.DataFrame({"v": [1.0]})
""",
}


@pytest.mark.parametrize("name", sorted(MALICIOUS_HANDLERS))
def test_malicious_handler_file_is_contained(name: str, tmp_path: Path, canaries) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(canaries.substitute(MALICIOUS_HANDLERS[name]))
    limits = SandboxLimits(handler_load_s=2.0)
    with pytest.raises(SandboxError) as info:
        SandboxPool(str(path), limits=limits).close()
    # the loader sees only its own folder (fsview): other paths do not exist for it
    expected = {"reads_secret_file": "No such file or directory", "reads_environment": "KeyError", "writes_marker":
                "No such file or directory", "connects": "Operation not permitted", "spawns": "Operation not permitted",
                "hangs": "longer than"}[name]
    assert expected in str(info.value)
    canaries.assert_untouched(str(info.value))


def test_handler_file_reads_its_own_folder(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("t,value\n0,1.5\n1,2.5\n2,4.0\n")
    (tmp_path / "csv_handler.py").write_text('''
from pathlib import Path
import pandas as pd
class CsvHandler:
    name = "csv"
    description = "one record from data.csv"
    def __init__(self, data_dir=None):
        self.frame = pd.read_csv(Path(data_dir) / "data.csv")
    def records(self):
        return pd.DataFrame({"record_id": [1], "label": ["rising"]})
    def series(self, record_id):
        return self.frame.set_index("t")
''')
    os.chmod(tmp_path, 0o700)  # not readable by a run's uid: the loader's view holds a readable copy
    source = ("def question(n):\n    rid = handler.records()['record_id'].iloc[0]\n"
              "    v = handler.series(rid)['value']\n"
              "    return [mc_item(f'Last value of {handler.name}?', f'{v.iloc[-1]:.1f}', ['0.0']) for _ in range(n)]\n")
    with SandboxPool(str(tmp_path / "csv_handler.py")) as csv_pool:
        result = csv_pool.run(source, num_samples=2)
    assert result.status is RunStatus.ok, result.error
    assert "4.0" in result.items[0]["options"]


def test_filter_built_in_the_child_when_not_precompiled() -> None:
    def probe() -> dict[str, Any]:
        return {"fork": attempt(os.fork), "kill": attempt(lambda: os.kill(os.getppid(), 0))}

    result, _ = in_hardened_child(probe, seccomp_program=None)
    assert result == {"fork": "PermissionError:1", "kill": "PermissionError:1"}


def test_a_handler_folder_copy_keeps_subfolders_and_never_follows_links(tmp_path: Path, canaries) -> None:
    """A folder the run's uid cannot read is copied into the loader's view: files and subfolders
    come along, a symlink (here to a secret) does not."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "values.csv").write_text("t,value\n0,7.5\n")
    os.symlink(canaries.secret_file, tmp_path / "leak.txt")
    (tmp_path / "h.py").write_text('''
from pathlib import Path
import pandas as pd
class H:
    name = "h"
    description = "reads its subfolder; its link to elsewhere is gone"
    def __init__(self, data_dir=None):
        self.frame = pd.read_csv(Path(data_dir) / "sub" / "values.csv")
        self.leak = (Path(data_dir) / "leak.txt").exists()
    def records(self):
        return pd.DataFrame({"record_id": [1], "label": ["leak" if self.leak else "no leak"]})
    def series(self, record_id):
        return self.frame.set_index("t")
''')
    os.chmod(tmp_path, 0o700)
    source = ("def question(n):\n    r = handler.records()\n    v = handler.series(r['record_id'].iloc[0])['value']\n"
              "    return [mc_item(str(r['label'].iloc[0]), f'{v.iloc[-1]:.1f}', ['0.0']) for _ in range(n)]\n")
    with SandboxPool(str(tmp_path / "h.py")) as copied_pool:
        result = copied_pool.run(source, num_samples=1)
    assert result.status is RunStatus.ok, result.error
    assert result.items[0]["question"] == "no leak" and "7.5" in result.items[0]["options"]
    canaries.assert_untouched(json.dumps(result.items))
