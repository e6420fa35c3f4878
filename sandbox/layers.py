"""The OS isolation layers a sandbox child can have, and the errors about them.

Every layer is meant to hold on its own (tests/sandbox/test_os_layers.py disables all the
others and shows what each one alone stops). `SandboxLimits.required_layers` (default: all)
makes a worker refuse to start without them; `allow_degraded` (local development only) lets
it start anyway and reports the missing ones.
"""

from __future__ import annotations

LAYER_DESCRIPTIONS: dict[str, str] = {
    "netns": "an empty network namespace (no interfaces but a down loopback) and an IPC namespace of each "
             "child's own (SysV IPC and POSIX message queues die with the child)",
    "pidns": "a PID namespace with its own /proc: host processes are invisible",
    "fsview": "a private mount namespace whose root holds only read-only binds of the Python "
              "installation, site-packages, the project's packages and shared libraries",
    "uid": "a uid/gid of its own per run (uid_base + host pid), no supplementary groups",
    "capabilities": "no capabilities: effective, permitted, inheritable, ambient and bounding sets empty, "
                    "securebits locked",
    "landlock": "Landlock: read-only access beneath the allowed folders, no TCP, scoped signals",
    "seccomp": "seccomp deny-list: processes, exec, sockets, signals, ptrace, namespaces, mounts, SysV IPC, "
               "message queues, xattrs, chmod/chown/utime, links, readlink, O_PATH opens, host facts (sysinfo, "
               "mounts), memfd_secret, dumpable again, fd owners (F_SETOWN)",
    "rlimits": "address space, CPU seconds, file size 0, open files, processes, no core dumps",
}
ALL_LAYERS: tuple[str, ...] = tuple(LAYER_DESCRIPTIONS)


class IsolationUnavailable(RuntimeError):
    """A required isolation layer is not available on this machine: the sandbox must not run.

    Distinct from a template or handler failure: the service answers 503 and refuses to start.
    """

    def __init__(self, missing: list[str], detail: str = "") -> None:
        self.missing = sorted(missing)
        message = f"required sandbox isolation layers unavailable: {', '.join(self.missing)}"
        super().__init__(message + (f" ({detail})" if detail else ""))


def check_layer_names(names: tuple[str, ...]) -> tuple[str, ...]:
    unknown = sorted(set(names) - set(ALL_LAYERS))
    if unknown:
        raise ValueError(f"unknown sandbox layers {unknown}; known: {', '.join(ALL_LAYERS)}")
    return tuple(dict.fromkeys(names))
