"""Namespaces a worker (zygote) sets up once, and the filesystem view each child enters.

At start-up a root worker unshares network, IPC, mount and PID namespaces. Its first fork is
the PID namespace's init (`_pid_init`): it mounts a /proc of the new namespace over /proc (in
the worker's private mount namespace, so host processes are invisible to everything forked
later) and then only reaps. Every later fork of the worker lands in that PID namespace.

The filesystem view: the worker mounts a tmpfs on a staging folder (private to its mount
namespace) and builds views in it: directories 0755 (so a per-run uid can traverse them even
where the host's own folders, e.g. /root, are closed) holding read-only, nosuid bind mounts of
the allowed paths only. A child unshares a mount namespace of its own, pivots into its view
and detaches the old root: the host's files, the database, other uploads and /proc are not
there at all.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import select
import signal
import stat
from pathlib import Path

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.syscall.restype = ctypes.c_long

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine(), 155)
# Mount points a worker may use for its staging tmpfs (private to its mount namespace).
STAGING_CANDIDATES = ("/mnt", "/srv", "/media", "/opt", "/tmp")
VIEW_FILE_BYTES = 512 * 1024 * 1024  # cap on a handler folder copied into the loader's view


class NamespaceError(OSError):
    """A namespace or mount step failed."""


class HandlerFolderError(ValueError):
    """A user's handler folder cannot be put in the loader's view (the handler's fault)."""


def _check(res: int, what: str) -> None:
    if res != 0:
        err = ctypes.get_errno()
        raise NamespaceError(err, f"{what} failed: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(value: str | None) -> bytes | None:
        return value.encode() if value is not None else None

    _check(_libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def enter_network_namespace() -> None:
    """Empty network and IPC namespaces for the calling process and everything it forks (each
    child then enters an IPC namespace of its own, `enter_ipc_namespace`)."""
    unshare(CLONE_NEWNET | CLONE_NEWIPC)


def enter_ipc_namespace() -> int:
    """An IPC namespace of the calling process's own; returns its inode (read before the caller
    loses /proc). SysV segments, queues and semaphore sets and POSIX message queues made in it
    are freed when its last process exits, so nothing one child creates outlives it or is
    visible to a later child."""
    unshare(CLONE_NEWIPC)
    return os.stat("/proc/self/ns/ipc").st_ino


def make_mounts_private() -> None:
    """A mount namespace of its own whose mounts never propagate to or from the host."""
    unshare(CLONE_NEWNS)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def enter_pid_namespace() -> int:
    """Start a PID namespace for the caller's children; returns the pid of its init process.

    Needs the caller's private mount namespace (`make_mounts_private`): init mounts the new
    namespace's /proc over /proc there.
    """
    unshare(CLONE_NEWPID)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - init of the sandbox PID namespace
        os.close(ready_r)
        _pid_init(ready_w)
    os.close(ready_w)
    ready, _, _ = select.select([ready_r], [], [], 10)
    answer = os.read(ready_r, 512) if ready else b""
    os.close(ready_r)
    if answer != b"ok":
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise NamespaceError(0, f"the PID namespace could not be set up: {answer.decode(errors='replace') or 'timeout'}")
    return pid


def _pid_init(ready_w: int) -> None:  # pragma: no cover - runs as pid 1 of the sandbox namespace
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.closerange(3, ready_w)
        os.closerange(ready_w + 1, 1 << 16)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
        os.write(ready_w, b"ok")
    except BaseException as exc:  # noqa: BLE001 - reported to the worker
        os.write(ready_w, str(exc).encode()[:500])
        os._exit(1)
    os.close(ready_w)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            signal.pause()
        except InterruptedError:
            continue


def staging_folder(avoid: list[str]) -> str:
    """A folder the worker can mount its staging tmpfs on without hiding any path it needs."""
    for candidate in STAGING_CANDIDATES:
        if not os.path.isdir(candidate):
            continue
        if any(path == candidate or path.startswith(candidate + "/") for path in avoid):
            continue
        return candidate
    raise NamespaceError(0, "no folder to stage the sandbox's filesystem view on")


class ViewBuilder:
    """Views (new roots) inside one staging tmpfs; `seal()` makes the tmpfs read-only."""

    def __init__(self, staging: str) -> None:
        self.staging = staging
        _mount("itemsmith-views", staging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=64m")

    def build(self, name: str, read_paths: list[str], folders: tuple[str, ...] | list[str] = ()) -> str:
        """A view holding read-only binds of `read_paths` and of the `folders` (copies of those
        a run's uid could not read: a handler folder only root can read, e.g. under a 0700 dir)."""
        root = os.path.join(self.staging, name)
        os.mkdir(root, 0o755)
        _mount(root, root, None, MS_BIND)  # a mount of its own: `discard_view` detaches it whole
        for path in read_paths:
            self._bind(root, path)
        for folder in folders:
            if readable_by_everyone(folder):
                self._bind(root, folder)
            else:
                self._copy_folder(root, folder)
        return root

    def _target(self, root: str, path: str, is_dir: bool) -> str:
        target = root + path
        parent = os.path.dirname(target)
        os.makedirs(parent, mode=0o755, exist_ok=True)
        if is_dir:
            os.makedirs(target, mode=0o755, exist_ok=True)
        elif not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        return target

    def _bind(self, root: str, path: str) -> None:
        st = os.stat(path)
        target = self._target(root, path, stat.S_ISDIR(st.st_mode))
        _mount(path, target, None, MS_BIND | MS_REC)
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID
        if not stat.S_ISCHR(st.st_mode):
            flags |= MS_NODEV
        _mount(None, target, None, flags)

    def _copy_folder(self, root: str, folder: str) -> None:
        """Copy a folder's regular files (not links, fifos or devices) into its own tmpfs in the
        view, readable by any uid: a handler folder the run uid could not read on the host."""
        target = self._target(root, folder, True)
        _mount("itemsmith-handler", target, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=755,size={VIEW_FILE_BYTES}")
        total = 0
        # fd-relative walk: a folder swapped for a symlink mid-copy cannot lead the copy elsewhere
        for dirpath, _, filenames, dir_fd in os.fwalk(folder, follow_symlinks=False):
            out_dir = os.path.normpath(os.path.join(target, os.path.relpath(dirpath, folder)))
            os.makedirs(out_dir, mode=0o755, exist_ok=True)
            for name in filenames:
                try:  # links are left out (O_NOFOLLOW: ELOOP), and so is anything not a regular file
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                except OSError as exc:
                    if exc.errno == errno.ELOOP:
                        continue
                    raise HandlerFolderError(f"cannot read {os.path.join(dirpath, name)}: {exc.strerror}") from None
                try:
                    if not stat.S_ISREG(os.fstat(fd).st_mode):
                        continue
                    with os.fdopen(os.open(os.path.join(out_dir, name), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644),
                                   "wb") as out:
                        while chunk := os.read(fd, 1 << 20):
                            total += len(chunk)
                            if total > VIEW_FILE_BYTES:
                                raise HandlerFolderError("the handler folder is larger than the sandbox's "
                                                         f"{VIEW_FILE_BYTES >> 20} MiB")
                            out.write(chunk)
                finally:
                    os.close(fd)
        _mount(None, target, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

    def seal(self) -> None:
        _mount(None, self.staging, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def discard_view(root: str) -> None:
    """Detach a view and everything mounted in it (a loader's copy of a handler folder frees its
    memory once the handler is loaded)."""
    _check(_libc.umount2(root.encode(), MNT_DETACH), f"umount {root}")


def readable_by_everyone(folder: str) -> bool:
    """Every folder beneath `folder` listable and every regular file readable by any uid (its
    parents do not matter: in a view they are 0755 tmpfs folders)."""
    for dirpath, _, filenames in os.walk(folder, followlinks=False):
        if os.stat(dirpath).st_mode & 0o005 != 0o005:
            return False
        for name in filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o004:
                return False
    return True


def enter_view(root: str) -> None:
    """Pivot the calling (single-threaded, forked) process into `root` in a mount namespace of
    its own; the old root is detached, so nothing outside the view can be reached by path."""
    unshare(CLONE_NEWNS)
    _mount(root, root, None, MS_BIND | MS_REC)
    os.chdir(root)
    _check(_libc.syscall(_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "umount of the old root")
    os.chdir("/")


def readable_by(paths: list[str], uid: int, gid: int, view: str | None) -> str | None:
    """None when `uid` can list every folder and read every file in `paths` (inside `view`, when
    given); else what failed. Probed in a short-lived forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        os.close(r)
        message = b""
        try:
            if view is not None:
                enter_view(view)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            for path in paths:
                if Path(path).is_dir():
                    os.listdir(path)
                else:
                    with open(path, "rb") as fh:
                        fh.read(1)
        except BaseException as exc:  # noqa: BLE001
            message = f"{type(exc).__name__}: {exc}".encode()[:1000]
        finally:
            os.write(w, message)
            os._exit(0)
    os.close(w)
    answer = b""
    while chunk := os.read(r, 4096):
        answer += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return answer.decode(errors="replace") or None
