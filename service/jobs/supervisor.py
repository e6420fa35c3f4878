"""`itemsmith worker` supervises its Celery worker: the worker runs in a child process that is
started again when it exits on its own (a broker restart has crashed kombu's reconnect before:
``AttributeError: 'NoneType' object has no attribute 'hostname'``), with a growing pause between
quick crashes; a SIGTERM or SIGINT to the supervisor is passed on (Celery's warm shutdown hands
running jobs back) and ends it with the child's exit code. The child has a process group of its
own (a signal to the supervisor's group reaches it once, through the supervisor) and dies with
the supervisor (a SIGKILLed supervisor leaves no worker behind: its jobs' leases run out)."""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType

__all__ = ["supervise"]

log = logging.getLogger("itemsmith.jobs")


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # runs in the child between fork and exec
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def supervise(command: Sequence[str], *, env: Mapping[str, str] | None = None, max_pause_s: float = 30.0,
              stable_after_s: float = 60.0) -> int:
    """Run `command` (in `env`; None: this process's environment) until it is asked to stop; restart it
    whenever it exits otherwise."""
    stopping = threading.Event()
    child: list[subprocess.Popen[bytes]] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        stopping.set()
        if child and child[0].poll() is None:
            child[0].send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    pause = 1.0
    try:
        while True:
            started = time.monotonic()
            child[:] = [subprocess.Popen(list(command), env=env, process_group=0, preexec_fn=_die_with_parent)]
            code = child[0].wait()
            if stopping.is_set():
                return code
            pause = 1.0 if time.monotonic() - started > stable_after_s else min(pause * 2, max_pause_s)
            log.warning("the Celery worker exited with code %s; starting it again in %.0f s", code, pause)
            if stopping.wait(pause):
                return code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
