"""A minimal Landlock binding (ctypes, raw syscalls): a read-only view of a few folders.

A ruleset handles every filesystem right the running kernel knows, grants only
read-file/read-dir beneath the listed paths, and (ABI >= 4) handles TCP bind/connect with no
rule, so both are denied; (ABI >= 6) it scopes abstract unix sockets and signals to the
sandbox's own domain. Nothing can be written, created, removed, executed or truncated anywhere.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat
from collections.abc import Iterable

_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}
_CREATE, _ADD_RULE, _RESTRICT = _SYSCALLS.get(platform.machine(), (444, 445, 446))
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1

ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_REFER = 1 << 13
ACCESS_FS_TRUNCATE = 1 << 14
ACCESS_FS_IOCTL_DEV = 1 << 15
ACCESS_NET_BIND_TCP = 1 << 0
ACCESS_NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    """Landlock is unavailable or a ruleset could not be built."""


def abi_version() -> int:
    """The kernel's Landlock ABI version, or 0 when Landlock is unavailable."""
    version = _libc.syscall(_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return int(version) if version > 0 else 0


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= ACCESS_FS_REFER
    if abi >= 3:
        rights |= ACCESS_FS_TRUNCATE
    if abi >= 5:
        rights |= ACCESS_FS_IOCTL_DEV
    return rights


def create_read_only_ruleset(read_paths: Iterable[str]) -> tuple[int, int]:
    """A ruleset fd granting read access beneath `read_paths` only; returns (fd, abi).

    Paths that do not exist are skipped. The fd is inheritable by forked children, which apply
    it with `restrict_self(fd)`.
    """
    abi = abi_version()
    if abi <= 0:
        raise LandlockError(errno.ENOSYS, "Landlock is not available on this kernel")
    attr = _RulesetAttr(handled_access_fs=_handled_fs(abi))
    size = 8
    if abi >= 4:
        attr.handled_access_net = ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    fd = _libc.syscall(_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock_create_ruleset failed: {os.strerror(err)}")
    fd = int(fd)
    try:
        for path in dict.fromkeys(read_paths):
            try:
                path_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                is_dir = stat.S_ISDIR(os.fstat(path_fd).st_mode)
                allowed = ACCESS_FS_READ_FILE | (ACCESS_FS_READ_DIR if is_dir else 0)
                rule = _PathBeneathAttr(allowed_access=allowed, parent_fd=path_fd)
                res = _libc.syscall(_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                    ctypes.byref(rule), ctypes.c_uint32(0))
                if res < 0:
                    err = ctypes.get_errno()
                    raise LandlockError(err, f"landlock_add_rule({path}) failed: {os.strerror(err)}")
            finally:
                os.close(path_fd)
    except BaseException:
        os.close(fd)
        raise
    os.set_inheritable(fd, True)
    return fd, abi


def restrict_self(ruleset_fd: int) -> None:
    """Apply the ruleset to the calling thread (single-threaded child); needs no_new_privs or root."""
    res = _libc.syscall(_RESTRICT, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0))
    if res < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock_restrict_self failed: {os.strerror(err)}")
