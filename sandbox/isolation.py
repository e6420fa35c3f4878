"""Isolation layer: what a freshly forked child does to itself before it runs any template code.

Order (each step needs the privileges the later ones drop); `plan.layers` says which of the
layers in `sandbox.layers` to apply:

1. die with the worker (PR_SET_PDEATHSIG=SIGKILL); close every inherited fd except the pipes;
   stdin/stdout/stderr -> /dev/null; an IPC namespace of its own (layer netns: SysV objects and
   POSIX message queues it makes are freed when it exits, and it sees none of another child's);
2. rlimits: address space (the preloaded interpreter + the memory limit), CPU seconds, file
   size 0, open files, processes (counted per uid), no core dumps, no locked memory;
3. fsview: a mount namespace of its own, pivoted into a root that holds only read-only binds
   of the allowed paths (`sandbox.namespaces`);
4. no_new_privs; Landlock read-only view (read beneath the allowed paths only; no write/create/
   remove/exec anywhere; TCP bind/connect denied; signals and abstract unix sockets scoped);
5. capabilities: securebits locked (no root fix-ups), bounding and ambient sets emptied;
6. uid: a uid/gid of this run's own (`SandboxLimits.run_uid`), no supplementary groups;
   then effective, permitted and inheritable capabilities all cleared (no capability is kept,
   whatever the uid can or cannot read: the fsview and the worker's readability check make
   the interpreter readable instead);
7. not dumpable (no ptrace/proc access from same-uid processes);
8. seccomp deny-list (last, since it blocks some of the calls above), EPERM unless noted:
   process creation (fork, vfork, clone without CLONE_THREAD, clone3 -> ENOSYS), execve(at),
   sockets, ptrace and process_vm_*, sending signals, namespaces and mounts, keyrings, bpf,
   perf, userfaultfd, io_uring, SysV IPC and POSIX message queues, module loading, reboot/swap/clock/hostname changes,
   open_by_handle_at, what the host is (sysinfo: uptime, load, memory; listmount/statmount),
   memfd_secret, prctl PR_SET_DUMPABLE and PR_SET_PTRACER, an fd's owner (fcntl F_SETOWN(_EX),
   ioctl FIOSETOWN/SIOCSPGRP: signals by SIGIO), and what Landlock does not cover: the xattr
   family, chmod/chown/utime families, link/symlink/readlink(at), mknod, open/openat with O_PATH
   (openat2 -> ENOSYS).
   Threads stay possible (they die with the process and count against RLIMIT_NPROC and
   RLIMIT_CPU); nothing in a template's namespace can start one.

The network and PID namespaces are entered once by the worker (zygote) at start-up, so every
child inherits them; the IPC namespace is per child (`sandbox.namespaces`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from itemsmith.sandbox import landlock, namespaces
from itemsmith.sandbox.layers import ALL_LAYERS

try:  # imported up front: after Landlock the child could not load libseccomp any more
    import pyseccomp as _seccomp
except Exception:  # noqa: BLE001 - missing package or libseccomp.so
    _seccomp = None

_libc = ctypes.CDLL(None, use_errno=True)

PR_SET_PDEATHSIG = 1
PR_SET_SECUREBITS = 28
# SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS_LOCKED, SECBIT_NO_CAP_AMBIENT_RAISE and their locks
SECUREBITS_LOCKED = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CLONE_THREAD = 0x00010000

def _cap_last() -> int:
    """The highest capability number of this kernel (read at import: children have no /proc)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read())
    except OSError:
        return 40


_CAP_LAST = _cap_last()
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
    "open_tree_attr",
    # what the host is and holds: uptime, load, memory and process count (sysinfo), its mounts
    # (listmount, statmount); memory taken out of the kernel's own mappings (memfd_secret)
    "sysinfo", "listmount", "statmount", "memfd_secret",
    # what Landlock does not cover: metadata and links
    "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "getxattrat", "setxattrat", "listxattrat", "removexattrat",
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "utime", "utimes", "utimensat", "futimesat",
    "link", "linkat", "symlink", "symlinkat", "readlink", "readlinkat", "mknod", "mknodat",
    "file_setattr", "quotactl_fd", "fanotify_mark", "inotify_init", "inotify_init1",
    # SysV IPC and POSIX message queues: objects that outlive the process, outside every
    # rlimit (the per-child IPC namespace frees them too; this holds without it)
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl", "ipc",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
)
# Calls newer than some libseccomp releases, which then cannot name them (a name it cannot resolve
# would leave the call allowed): their numbers, which are the same on x86_64 and aarch64 (and every
# other architecture of the generic table) for calls from number 424 on.
_NEWER_SYSCALLS = {"statmount": 457, "listmount": 458, "setxattrat": 463, "getxattrat": 464, "listxattrat": 465,
                   "removexattrat": 466, "open_tree_attr": 467, "file_setattr": 469}
_GENERIC_TABLE_MACHINES = ("x86_64", "aarch64")
O_PATH = 0o10000000
PR_SET_PTRACER = 0x59616D61
F_SETOWN = 8
F_SETOWN_EX = 15
FIOSETOWN = 0x8901
SIOCSPGRP = 0x8902
# Calls refused (EPERM) for one value of one argument: (syscall, argument index, value). Dumpable
# again or a named tracer would open the child to ptrace and /proc from its uid; an fd's owner
# (F_SETOWN, and its ioctl forms) would make the kernel send SIGIO/SIGURG to a process of the
# child's choice, a signal past the `kill` rules. The kernel reads these arguments as 32-bit
# ints, so only their low 32 bits are compared (high bits set would otherwise slip past).
DENIED_ARGUMENTS = (
    ("prctl", 0, PR_SET_DUMPABLE), ("prctl", 0, PR_SET_PTRACER),
    ("fcntl", 1, F_SETOWN), ("fcntl", 1, F_SETOWN_EX),
    ("ioctl", 1, FIOSETOWN), ("ioctl", 1, SIOCSPGRP),
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
    layers: frozenset[str]  # the layers to apply (sandbox.layers); a failure to apply one raises
    ruleset_fd: int | None = None
    uid: int | None = None  # the run's own uid/gid (layer "uid")
    gid: int | None = None
    view_root: str | None = None  # the root to pivot into (layer "fsview")
    seccomp_program: bytes | None = None  # precompiled BPF (seccomp_program()); built here if None


def _check(res: int, what: str) -> None:
    if res != 0:
        err = ctypes.get_errno()
        raise IsolationError(f"{what} failed: {os.strerror(err)}")


def seccomp_available() -> bool:
    return _seccomp is not None


_own_statm: tuple[int, int] | None = None  # (pid, fd) of a /proc/self/statm opened by `keep_own_statm`


def keep_own_statm() -> None:
    """Open this process's /proc/self/statm now, for `address_space_in_use` once a PID
    namespace's /proc, in which this process has no entry, is mounted over /proc (the worker)."""
    global _own_statm
    _own_statm = (os.getpid(), os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))


def address_space_in_use() -> int:
    """Current virtual memory size of this process in bytes."""
    if _own_statm is not None and _own_statm[0] == os.getpid():
        raw = os.pread(_own_statm[1], 256, 0)
    else:  # a forked child reads its own
        with open("/proc/self/statm", "rb") as fh:
            raw = fh.read()
    return int(raw.split()[0]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def address_space_limit(memory_bytes: int) -> Iterator[None]:
    """Within the block, this process may use `memory_bytes` of address space beyond what it uses
    now (a child's RLIMIT_AS, `_set_rlimits`): an allocation past it raises `MemoryError`. Only the
    soft limit is lowered, so it is raised back at the end; the caller's other threads are bound
    by it too while it holds."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = address_space_in_use() + memory_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


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
_ipc_namespace: int | None = None  # inode of this child's own IPC namespace (layer "netns")


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


CAP_KILL, CAP_SETGID, CAP_SETUID, CAP_SETPCAP, CAP_SYS_ADMIN = 5, 6, 7, 8, 21


def effective_capabilities() -> int:
    """The calling process's effective capability set, as a bit mask."""
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(header), ctypes.byref(data)), "capget")
    return data[0].effective | (data[1].effective << 32)


def missing_capabilities(*caps: int) -> list[str]:
    names = {CAP_KILL: "CAP_KILL", CAP_SETGID: "CAP_SETGID", CAP_SETUID: "CAP_SETUID", CAP_SETPCAP: "CAP_SETPCAP",
             CAP_SYS_ADMIN: "CAP_SYS_ADMIN"}
    have = effective_capabilities()
    return [names[cap] for cap in caps if not have & (1 << cap)]


def _capset(caps: int) -> None:
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    data[0].effective = data[0].permitted = caps & 0xFFFFFFFF
    data[1].effective = data[1].permitted = caps >> 32
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _drop_bounding_set(keep: int) -> None:
    for cap in range(_CAP_LAST + 1):
        if not keep & (1 << cap):
            _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "PR_CAPBSET_DROP")
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing the ambient capabilities")


def _drop_capabilities() -> None:
    """Lock the securebits (uid 0 gets no capabilities back) and empty the bounding and
    ambient sets; the effective/permitted/inheritable sets are cleared by `_clear_capabilities`."""
    _check(_libc.prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED, 0, 0, 0), "PR_SET_SECUREBITS")
    _drop_bounding_set(0)


def _clear_capabilities() -> None:
    _capset(0)


def _drop_uid(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise IsolationError("could not drop to the run's uid")


def _syscall_number(sc: Any, name: str) -> int | str:
    """`name`'s number where libseccomp does not know a call this kernel may have, else the name."""
    if sc.resolve_syscall(sc.Arch.NATIVE, name) < 0 and os.uname().machine in _GENERIC_TABLE_MACHINES:
        return _NEWER_SYSCALLS.get(name, name)
    return name


def build_seccomp_filter() -> Any:
    """The deny-list filter (the same for every child: it names no pid)."""
    sc = _seccomp
    if sc is None:
        raise IsolationError("pyseccomp/libseccomp is not available")
    deny = sc.ERRNO(errno.EPERM)
    filt = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            filt.add_rule(deny, _syscall_number(sc, name))
        except (OSError, ValueError, RuntimeError):
            continue  # not a syscall on this architecture
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    filt.add_rule(sc.ERRNO(errno.ENOSYS), "openat2")  # its flags are in a struct the filter cannot see
    for name, index, value in DENIED_ARGUMENTS:
        filt.add_rule(deny, name, sc.Arg(index, sc.MASKED_EQ, 0xFFFFFFFF, value))
    filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    filt.add_rule(deny, "open", sc.Arg(1, sc.MASKED_EQ, O_PATH, O_PATH))
    filt.add_rule(deny, "openat", sc.Arg(2, sc.MASKED_EQ, O_PATH, O_PATH))
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

    Returns which layers are active; raises IsolationError when a step of a planned layer fails.
    """
    global _ipc_namespace
    layers = plan.layers
    active = dict.fromkeys(ALL_LAYERS, False)
    parent = os.getppid()
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
    if os.getppid() != parent:  # the worker died between fork and prctl
        os._exit(1)
    _close_fds(plan.keep_fds + ((plan.ruleset_fd,) if plan.ruleset_fd is not None else ()))
    if "netns" in layers:  # the worker's namespaces are shared by its children; IPC is per child
        try:
            _ipc_namespace = namespaces.enter_ipc_namespace()
        except OSError as exc:
            raise IsolationError(f"no IPC namespace of its own: {exc}") from None
    if "rlimits" in layers:
        try:
            _set_rlimits(plan)
        except (OSError, ValueError) as exc:
            raise IsolationError(f"setrlimit failed: {exc}") from None
        active["rlimits"] = True
    if "fsview" in layers:
        if plan.view_root is None:
            raise IsolationError("no filesystem view was built")
        try:
            namespaces.enter_view(plan.view_root)
        except OSError as exc:
            raise IsolationError(str(exc)) from None
        active["fsview"] = True
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    if plan.ruleset_fd is not None:
        try:
            if "landlock" in layers:
                landlock.restrict_self(plan.ruleset_fd)
                active["landlock"] = True
        except landlock.LandlockError as exc:
            raise IsolationError(str(exc)) from None
        finally:
            os.close(plan.ruleset_fd)
    if "landlock" in layers and not active["landlock"]:
        raise IsolationError("no Landlock ruleset was built")
    if "capabilities" in layers:
        _drop_capabilities()
    if "uid" in layers:
        if plan.uid is None or plan.gid is None:
            raise IsolationError("no uid for this run")
        _drop_uid(plan.uid, plan.gid)
        active["uid"] = True
    if "capabilities" in layers:
        _clear_capabilities()
        active["capabilities"] = True
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "PR_SET_DUMPABLE")
    if "seccomp" in layers:
        try:
            if plan.seccomp_program is not None:
                _install_seccomp(plan.seccomp_program)
            else:  # no precompiled program (RLIMIT_FSIZE=0 rules out exporting one here)
                build_seccomp_filter().load()
        except Exception as exc:  # noqa: BLE001 - any failure means no filter
            raise IsolationError(f"seccomp failed: {exc}") from None
        active["seccomp"] = True
    return active


IPC_PRIVATE, IPC_RMID = 0, 0


def _probe_shmget() -> None:
    """Create (and at once remove) a one-page SysV segment; raises OSError when refused."""
    segment = _libc.shmget(IPC_PRIVATE, 4096, 0o1000 | 0o600)  # IPC_CREAT
    if segment < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    _libc.shmctl(segment, IPC_RMID, None)


def observe_layers() -> dict[str, Any]:
    """What a hardened child can see of its own confinement (no privileged call needed);
    the worker compares it with what it set up (`Zygote.probe`)."""
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _libc.capget(ctypes.byref(header), ctypes.byref(data))
    caps = 0
    for index, part in enumerate(data):
        caps |= (part.effective | part.permitted | part.inheritable) << (32 * index)
    bounding = sum(1 << cap for cap in range(64) if _libc.prctl(23, cap, 0, 0, 0) == 1)  # PR_CAPBSET_READ
    ambient = sum(1 << cap for cap in range(64) if _libc.prctl(PR_CAP_AMBIENT, 1, cap, 0, 0) == 1)  # IS_SET

    def outcome(fn: Any) -> str:
        try:
            fn()
        except OSError as exc:
            return errno.errorcode.get(exc.errno or 0, str(exc.errno))
        return "allowed"

    return {
        "uid": list(os.getresuid()), "gid": list(os.getresgid()), "groups": os.getgroups(),
        "capabilities": caps, "bounding": bounding, "ambient": ambient,
        "no_new_privs": _libc.prctl(39, 0, 0, 0, 0), "seccomp_mode": _libc.prctl(21, 0, 0, 0, 0),
        "pid": os.getpid(),
        "etc_visible": os.path.exists("/etc/passwd"),
        "list_root": outcome(lambda: os.listdir("/")),
        "xattr": outcome(lambda: os.listxattr(os.__file__)),
        "ipc_namespace": _ipc_namespace,
        "sysv_shmget": outcome(_probe_shmget),
        "address_space_limit": resource.getrlimit(resource.RLIMIT_AS)[0],
    }
