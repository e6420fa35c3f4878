"""Isolation layer: what a freshly forked child does to itself before it runs any template code.

Order (each step needs the privileges the later ones drop):

1. die with the worker (PR_SET_PDEATHSIG=SIGKILL); close every inherited fd except the result
   pipe; stdin/stdout/stderr -> /dev/null;
2. rlimits: address space (the preloaded interpreter + the memory limit), CPU seconds, file
   size 0, open files, processes (counted per uid), no core dumps, no locked memory;
3. no_new_privs; Landlock read-only view (read beneath the Python installation and the
   project's packages only; no write/create/remove/exec anywhere; TCP bind/connect denied;
   signals and abstract unix sockets scoped to the sandbox);
4. drop to an unprivileged uid/gid with no supplementary groups (when running as root), with
   no capabilities, or only CAP_DAC_READ_SEARCH where that uid cannot read the Python
   installation (Landlock still bounds what can be read);
5. not dumpable (no ptrace/proc access from same-uid processes);
6. seccomp deny-list (last, since it blocks some of the calls above): process creation (fork,
   vfork, clone without CLONE_THREAD, clone3), execve/execveat, sockets (socket, socketpair,
   connect, bind, listen, accept), ptrace and process_vm_*, sending signals (kill, tgkill, ...),
   namespaces and mounts, kernel keyrings, bpf, perf, userfaultfd, io_uring, module loading,
   reboot/swap/clock/hostname changes, open_by_handle_at. Threads stay possible (they die with
   the process and count against RLIMIT_NPROC and RLIMIT_CPU); nothing in a template's
   namespace can start one.

The network namespace is entered once by the worker (zygote) at start-up, so every child
inherits an empty one: no interfaces but a down loopback.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
from dataclasses import dataclass, field
from typing import Any

from itemsmith.sandbox import landlock

try:  # imported up front: after Landlock the child could not load libseccomp any more
    import pyseccomp as _seccomp
except Exception:  # noqa: BLE001 - missing package or libseccomp.so
    _seccomp = None

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_KEEPCAPS = 8
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CLONE_NEWNET = 0x40000000
CLONE_NEWIPC = 0x08000000
CLONE_THREAD = 0x00010000
_CAP_LAST_FALLBACK = 40
CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Syscalls refused with EPERM (ENOSYS for clone3, so libc falls back to clone, which is filtered).
DENIED_SYSCALLS = (
    "fork", "vfork", "execve", "execveat",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open", "pidfd_getfd",
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "iopl", "ioperm", "vhangup",
    "fanotify_init", "open_by_handle_at", "name_to_handle_at", "personality", "uselib",
    "modify_ldt", "lookup_dcookie", "nfsservctl",
)


class IsolationError(RuntimeError):
    """A hardening step failed; the child must not run untrusted code."""


@dataclass(frozen=True)
class HardeningPlan:
    """What one child applies to itself; built by the worker, applied right after fork."""

    keep_fds: tuple[int, ...]
    memory_bytes: int
    cpu_seconds: int
    max_open_files: int
    max_processes: int
    ruleset_fd: int | None = None
    uid: int | None = None  # drop to uid/gid (when root)
    gid: int | None = None
    # Keep CAP_DAC_READ_SEARCH (and nothing else) after dropping the uid: for installations the
    # sandbox uid cannot read (e.g. Python under /root). Landlock still limits reads to its
    # allow-list, and seccomp blocks open_by_handle_at, the one other thing it grants.
    keep_read_capability: bool = False
    seccomp: bool = True
    seccomp_program: bytes | None = None  # precompiled BPF (seccomp_program()); built here if None
    required: frozenset[str] = field(default_factory=frozenset)


def _check(res: int, what: str) -> None:
    if res != 0:
        err = ctypes.get_errno()
        raise IsolationError(f"{what} failed: {os.strerror(err)}")


def enter_network_namespace() -> bool:
    """Move the calling process into new, empty network and IPC namespaces (root only)."""
    if _libc.unshare(ctypes.c_int(CLONE_NEWNET | CLONE_NEWIPC)) != 0:
        return False
    return True


def seccomp_available() -> bool:
    return _seccomp is not None


def address_space_in_use() -> int:
    """Current virtual memory size of this process in bytes."""
    with open("/proc/self/statm", "rb") as fh:
        pages = int(fh.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _close_fds(keep: tuple[int, ...]) -> None:
    keep_sorted = sorted(k for k in keep if k > 2)
    low = 3
    for fd in keep_sorted:
        if fd > low:
            os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    devnull = os.open("/dev/null", os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    if devnull > 2:
        os.close(devnull)


_baseline_address_space = 0


def _set_rlimits(plan: HardeningPlan) -> None:
    global _baseline_address_space
    _baseline_address_space = address_space_in_use()
    memory = _baseline_address_space + plan.memory_bytes
    limits = (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, plan.cpu_seconds),
        (resource.RLIMIT_FSIZE, 0),
        (resource.RLIMIT_NOFILE, plan.max_open_files),
        (resource.RLIMIT_NPROC, plan.max_processes),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_MEMLOCK, 0),
        (resource.RLIMIT_MSGQUEUE, 0),
    )
    for which, value in limits:
        hard = value + 1 if which == resource.RLIMIT_CPU else value
        resource.setrlimit(which, (value, hard))
    try:  # nice may return to the default 0 (no lower): a spare idling at SCHED_IDLE can switch back
        resource.setrlimit(resource.RLIMIT_NICE, (20, 20))
    except (ValueError, OSError):
        pass  # needs CAP_SYS_RESOURCE; the worker resets the policy itself


def lower_limits(*, memory_bytes: int, cpu_seconds: int, max_open_files: int, max_processes: int) -> None:
    """Lower the rlimits of an already hardened child to one request's limits (never raises them)."""
    wanted = (
        (resource.RLIMIT_AS, _baseline_address_space + memory_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_NOFILE, max_open_files),
        (resource.RLIMIT_NPROC, max_processes),
    )
    for which, value in wanted:
        soft, hard = resource.getrlimit(which)
        if which == resource.RLIMIT_CPU:
            new = (min(value, soft), min(value + 1, hard))
        else:
            new = (min(value, soft), min(value, hard))
        if new != (soft, hard):
            resource.setrlimit(which, new)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _capset(caps: int) -> None:
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = caps & 0xFFFFFFFF
    data[1].effective = data[1].permitted = caps >> 32
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _drop_bounding_set(keep: int) -> None:
    last = _CAP_LAST_FALLBACK
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            last = int(fh.read())
    except OSError:
        pass
    for cap in range(last + 1):
        if not keep & (1 << cap):
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def _drop_uid(uid: int, gid: int, keep_read_capability: bool) -> None:
    keep = (1 << CAP_DAC_READ_SEARCH) if keep_read_capability else 0
    _drop_bounding_set(keep)
    if keep:
        _check(_libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "PR_SET_KEEPCAPS")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid:
        raise IsolationError("could not drop to the sandbox uid")
    _capset(keep)  # effective = permitted = keep; inheritable = 0
    if keep:
        _libc.prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0)


def uid_can_read(paths: list[str], uid: int, gid: int) -> bool:
    """Whether `uid` can list every one of `paths` (probed in a short-lived forked child)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            for path in paths:
                os.listdir(path)
            code = 0
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def build_seccomp_filter() -> Any:
    """The deny-list filter (the same for every child: it names no pid)."""
    sc = _seccomp
    if sc is None:
        raise IsolationError("pyseccomp/libseccomp is not available")
    deny = sc.ERRNO(errno.EPERM)
    filt = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            filt.add_rule(deny, name)
        except (OSError, ValueError, RuntimeError):
            continue  # not a syscall on this architecture
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    return filt


def seccomp_program() -> bytes:
    """The filter compiled to classic BPF once (in the worker), for children to install cheaply."""
    filt = build_seccomp_filter()
    fd = os.memfd_create("itemsmith-seccomp", os.MFD_CLOEXEC)
    with os.fdopen(fd, "w+b") as fh:
        filt.export_bpf(fh)
        fh.flush()
        fh.seek(0)
        program = fh.read()
    if not program or len(program) % 8:
        raise IsolationError("could not compile the seccomp filter")
    return program


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def _install_seccomp(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0), "seccomp")


def harden(plan: HardeningPlan) -> dict[str, bool]:
    """Apply `plan` to the calling (freshly forked, single-threaded) process.

    Returns which features are active; raises IsolationError when a step fails or a feature
    in `plan.required` could not be applied.
    """
    active: dict[str, bool] = {}
    parent = os.getppid()
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if os.getppid() != parent:  # the worker died between fork and prctl
        os._exit(1)
    _close_fds(plan.keep_fds + ((plan.ruleset_fd,) if plan.ruleset_fd is not None else ()))
    try:
        _set_rlimits(plan)
        active["rlimits"] = True
    except (OSError, ValueError) as exc:
        raise IsolationError(f"setrlimit failed: {exc}") from None
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    active["landlock"] = False
    if plan.ruleset_fd is not None:
        try:
            landlock.restrict_self(plan.ruleset_fd)
            active["landlock"] = True
        except landlock.LandlockError as exc:
            raise IsolationError(str(exc)) from None
        finally:
            os.close(plan.ruleset_fd)
    active["uid"] = False
    if plan.uid is not None and plan.gid is not None and os.geteuid() == 0:
        _drop_uid(plan.uid, plan.gid, plan.keep_read_capability)
        active["uid"] = True
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "PR_SET_DUMPABLE")
    active["seccomp"] = False
    if plan.seccomp and (plan.seccomp_program is not None or seccomp_available()):
        try:
            if plan.seccomp_program is not None:
                _install_seccomp(plan.seccomp_program)
            else:  # no precompiled program (RLIMIT_FSIZE=0 rules out exporting one here)
                build_seccomp_filter().load()
            active["seccomp"] = True
        except Exception as exc:  # noqa: BLE001 - any failure means no filter
            raise IsolationError(f"seccomp failed: {exc}") from None
    missing = sorted(f for f in plan.required if f in active and not active[f])
    if missing:
        raise IsolationError(f"required isolation features unavailable: {', '.join(missing)}")
    return active
