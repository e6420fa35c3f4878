"""Ctrl-C stops a command at once, with its resume hint and exit code 130 (`cli._interrupt`), also
when the work it waits for cannot be stopped: a thread in C code that asyncio waits for on its way
out (llama.cpp reading a long prompt), or a main thread inside such a call. Each case runs the real
program (``app()``) in its own process group and interrupts it as a terminal does; a blocked call
lasts 600 s, so ending in well under a minute is the watcher's doing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PROGRAM = textwrap.dedent('''
    import asyncio, hashlib, sys, time
    from itemsmith.cli._interrupt import say_on_interrupt
    from itemsmith.cli.app import COMMANDS, CommandEntry, app
    from itemsmith.registry import LazyTarget

    def thread_in_c():
        """asyncio waits on its way out for a thread it cannot stop."""
        say_on_interrupt("resume with --run-id R1")
        async def work():
            print("under way", flush=True)
            await asyncio.to_thread(time.sleep, 600)
        asyncio.run(work())

    def main_thread_in_c():
        """The main thread is in C code that does not return for a long time (the GIL released)."""
        say_on_interrupt("resume with --resume E1")
        print("under way", flush=True)
        hashlib.pbkdf2_hmac("sha256", b"x", b"salt", 10**9)

    for name, target in (("thread-in-c", "thread_in_c"), ("main-thread-in-c", "main_thread_in_c")):
        COMMANDS.add(name, CommandEntry(LazyTarget("__main__:" + target), "a command that blocks"))
    app(sys.argv[1:], prog_name="itemsmith")
''')


def _interrupted(tmp_path: Path, command: str) -> tuple[int, str, float]:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    process = subprocess.Popen([sys.executable, str(script), command], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "under way"
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail(f"{command}: still running 60 s after Ctrl-C")
    return process.returncode, output, time.monotonic() - sent


@pytest.mark.parametrize(("command", "hint"), [("thread-in-c", "resume with --run-id R1"),
                                               ("main-thread-in-c", "resume with --resume E1")])
def test_ctrl_c_ends_a_blocked_command_with_its_hint(tmp_path: Path, command: str, hint: str) -> None:
    code, output, _ = _interrupted(tmp_path, command)
    assert code == 130, output
    assert output.count(f"error: interrupted; {hint}") == 1, output


def test_an_interrupted_authoring_run_says_how_to_resume_and_resumes(tmp_path: Path) -> None:
    """`itemsmith author` with a generator whose call takes 600 s: Ctrl-C ends it, and the run it
    names is resumable (its plan was kept)."""
    slow = tmp_path / "slow.json"
    slow.write_text('{"latency_s": 600, "replies": ["no code"]}')
    planner = tmp_path / "planner.json"
    planner.write_text('{"replies": ["[{\\"title\\": \\"Mean level\\", \\"category\\": \\"arithmetic\\", '
                       '\\"concept\\": \\"mean\\", \\"kind\\": \\"mc\\", \\"question\\": \\"What is the mean?\\", '
                       '\\"answer_from\\": \\"the mean\\", \\"columns\\": []}]"]}')
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("itemsmith")), "author", "--handler", "synthetic", "--task",
         "levels of the series", "--templates", "1", "--no-live", "--no-judges", "--no-students",
         "--generator", f"scripted:{slow}", "--planner", f"scripted:{planner}", "--run-id", "r-1",
         "--out", str(tmp_path / "out"), "--sandbox-workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if "generating" in line:  # the generator's call is in flight
            break
    else:
        pytest.fail("".join(lines))
    os.killpg(process.pid, signal.SIGINT)
    try:
        rest, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        pytest.fail("still running 60 s after Ctrl-C")
    assert process.returncode == 130, "".join(lines) + rest
    assert "error: interrupted; finished templates are kept: resume with --run-id r-1" in rest
    assert (tmp_path / "out" / "r-1" / "plan.json").is_file()
