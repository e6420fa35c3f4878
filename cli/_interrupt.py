"""Ctrl-C stops every command within about two seconds, saying how to resume.

A command registers what to say (`say_on_interrupt`). On SIGINT the command is first interrupted the
usual way (KeyboardInterrupt in the main thread, which asyncio turns into the cancellation of its
tasks); the root group answers it with the hint and exit code 130 (`INTERRUPTED`). That is not
always enough: a thread in C code cannot be stopped (llama.cpp reading a long prompt: minutes on a
small CPU), and the interpreter's exit, and asyncio's, wait for such threads; a main thread inside
such a call does not even see the signal until the call returns. So a watcher thread learns of the
signal at C level (`signal.set_wakeup_fd`) and, if the process is still there `GRACE_S` later,
prints the hint and ends it (`os._exit`); and an interrupted command, once it has said so, exits
without the interpreter's finalization (`without_finalizing`: PyTorch's alone takes seconds, and
the watcher's thread is gone by then). Nothing is lost: runs, evaluations and jobs write their
progress as they go (a run's checkpoints, stored answers), and the sandbox's children die with
their parent.

`itemsmith serve` and `itemsmith worker` handle their own signals (a graceful shutdown that may take
longer), and run without the watcher (`own_signal_handling`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["GRACE_S", "INTERRUPTED", "interrupted_message", "new_command", "own_signal_handling",
           "say_on_interrupt", "stopped_promptly", "without_finalizing"]

GRACE_S = 1.5
_STDERR = 2
INTERRUPTED = 130  # the exit code of an interrupted command (128 + SIGINT, as shells report it)

_state = {"hint": "", "said": False}
_said = threading.Lock()


def new_command() -> None:
    """A command starts: nothing to say yet, nothing said (commands run one after another in tests)."""
    with _said:
        _state.update(hint="", said=False)


def say_on_interrupt(text: str) -> None:
    """What the running command says when it is interrupted (e.g. "resume with --run-id ID")."""
    _state["hint"] = text


def interrupted_message() -> str | None:
    """The line to print on an interruption, once per process (None: it was printed already)."""
    with _said:
        if _state["said"]:
            return None
        _state["said"] = True
    hint = _state["hint"]
    return "error: interrupted" + (f"; {hint}" if hint else "")


def _watch(read_fd: int) -> None:
    try:
        while received := os.read(read_fd, 64):  # b"": the block ended and closed the pipe
            if signal.SIGINT in received:
                timer = threading.Timer(GRACE_S, _end)
                timer.daemon = True  # the exit that it waits for must not wait for it
                timer.start()
                return
    finally:
        os.close(read_fd)


def _end() -> None:
    # os-level calls only: this may run while the interpreter is shutting down (sys.stderr gone)
    message = interrupted_message()
    shown = "\x1b[?25h" if os.isatty(_STDERR) else ""  # a live progress table hid the cursor
    os.write(_STDERR, (shown + (message + "\n" if message else "")).encode())
    os._exit(INTERRUPTED)


@contextmanager
def stopped_promptly() -> Iterator[None]:
    """Run the block with the watcher (see the module's docstring); in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read_fd,), name="itemsmith-interrupt", daemon=True).start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write_fd)


@contextmanager
def without_finalizing(code: int) -> Iterator[None]:
    """A block that ends with ``SystemExit(code)`` ends the process at once (output flushed)."""
    try:
        yield
    except SystemExit as exc:
        if exc.code != code:
            raise
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)


@contextmanager
def own_signal_handling() -> Iterator[None]:
    """Run the block without the watcher: for a command that shuts down on its own signals."""
    previous = signal.set_wakeup_fd(-1)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
