"""Resuming an interrupted run: no template generated twice, none lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from itemsmith.agents.authoring.checkpoint import open_checkpointer
from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig

from ...support import await_until, wait_until
from ..conftest import BAD_RANDINT, GOOD, fenced, plan_reply, scripted

TITLES = ["First", "Second", "Third"]
SECOND = GOOD.replace("mean water level", "average water level")
THIRD = GOOD.replace("mean water level", "mean level of the water")


def config(handler_file: Path, tmp_path: Path, checkpoint: str | None = None, run_id: str = "resumable",
           **extra: Any) -> AuthorConfig:
    return AuthorConfig(handler=str(handler_file), task="water levels", templates=3, slots=1,
                        out_dir=tmp_path / "out", checkpoint=checkpoint or str(tmp_path / "ck.sqlite"), run_id=run_id,
                        **extra)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_scripted_resume_after_interrupted_run(pool, handler_file, tmp_path, backend, request) -> None:
    checkpoint = request.getfixturevalue("postgres_database") if backend == "postgres" else None
    run_id = f"resumable-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "out" / run_id
    first_script = {"exhausted": "error", "rules": [
        {"match": "Title: First", "replies": [fenced(GOOD)]},
        # round 1 of slot 1 fails; round 2 is still running when the run is killed
        {"match": "Title: Second", "replies": [fenced(BAD_RANDINT), {"content": fenced(SECOND), "latency_s": 30}]},
        {"match": "Title: Third", "replies": [fenced(THIRD)]},
    ]}
    gen1 = scripted(first_script)
    events: list[SlotEvent] = []
    before_first = datetime.now(UTC)

    async def interrupted() -> None:
        task = asyncio.create_task(author(config(handler_file, tmp_path, checkpoint, run_id), generator_model=gen1,
                                          planner_model=scripted([plan_reply(TITLES)]), on_event=events.append,
                                          pool=pool))
        # killed while round 2 of slot 1 is in flight: its (30 s) model call has started
        await await_until(lambda: gen1.model.calls == 3, "the third model call", 120)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(interrupted())
    assert gen1.model.calls == 3  # First, Second r1, Second r2 (in flight)
    after_first = datetime.now(UTC)
    first_work_s = asyncio.run(_work_s(checkpoint or str(tmp_path / "ck.sqlite"), tmp_path, run_id))
    assert 0 < first_work_s < (after_first - before_first).total_seconds()  # kept when slot 0 finished

    # The resumed run must not call the model for slot 0 again (its rule has no replies left:
    # `exhausted: error` would fail the slot), nor for round 1 of slot 1, nor re-plan.
    second_script = {"exhausted": "error", "rules": [
        {"match": "Title: First", "replies": []},
        {"match": "Title: Second", "replies": [fenced(SECOND)]},
        {"match": "Title: Third", "replies": [fenced(THIRD)]},
    ]}
    gen2 = scripted(second_script)
    planner2 = scripted({"replies": [], "exhausted": "error"})
    second_started = time.monotonic()
    report = asyncio.run(author(config(handler_file, tmp_path, checkpoint, run_id), generator_model=gen2,
                                planner_model=planner2, pool=pool))
    second_s = time.monotonic() - second_started
    assert report.resumed and planner2.model.calls == 0
    # the run's start is the first session's, its working time both sessions' (not the time between them)
    assert report.finished_at is not None and before_first <= report.started_at <= after_first < report.finished_at
    assert first_work_s < report.wall_s <= first_work_s + second_s
    assert gen2.model.calls == 2  # slot 1 round 2, slot 2 round 1
    assert [s.status for s in report.slots] == ["accepted", "accepted", "accepted"]
    assert [s.rounds for s in report.slots] == [1, 2, 1]
    assert [a.status for a in report.slots[1].attempts] == ["error", "ok"]  # round 1 kept, not redone
    assert report.slots[0].template is not None and report.slots[0].template.source == GOOD
    lines = (out / "templates.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["title"] for line in lines) == TITLES

    # A third call finds everything done, calls nothing and rewrites nothing: it returns the stored report.
    written = (out / "report.json").read_bytes()
    gen3 = scripted({"replies": [], "exhausted": "error"})
    reopened: list[SlotEvent] = []
    again = asyncio.run(author(config(handler_file, tmp_path, checkpoint, run_id), generator_model=gen3,
                               planner_model=scripted({"replies": [], "exhausted": "error"}), pool=pool,
                               on_event=reopened.append))
    assert gen3.model.calls == 0 and len(again.accepted) == 3
    assert (out / "report.json").read_bytes() == written
    assert again.summary() == report.summary() and again.started_at == report.started_at
    assert [e.phase for e in reopened] == ["accepted"] * 3


def test_resume_refuses_different_parameters(pool, handler_file, tmp_path) -> None:
    asyncio.run(author(config(handler_file, tmp_path), generator_model=scripted([fenced(GOOD)]),
                       planner_model=scripted([plan_reply(TITLES)]), pool=pool))
    other = config(handler_file, tmp_path).model_copy(update={"task": "something else"})
    try:
        asyncio.run(author(other, generator_model=scripted([fenced(GOOD)]), planner_model=scripted(["[]"]), pool=pool))
    except Exception as exc:  # noqa: BLE001
        assert "different parameters" in str(exc)
    else:
        raise AssertionError("a run id reused with a different task must be refused")


def test_scripted_cli_run_killed_with_sigkill_resumes(handler_file, tmp_path) -> None:
    """The CLI, killed -9 in the middle of slot 1, then resumed: slot 0 is neither lost nor redone."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"replies": [plan_reply(TITLES[:2])]}))
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps({"rules": [{"match": "Title: First", "replies": [fenced(GOOD)]},
                                          {"match": "Title: Second", "replies": [{"content": fenced(SECOND),
                                                                                  "latency_s": 60}]}]}))
    args = ["author", "--handler", str(handler_file), "--task", "water levels", "--templates", "2", "--slots", "1",
            "--planner", f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "killed", "--no-live"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    cmd = [sys.executable, "-c", "from itemsmith.cli.app import app; app()"]
    proc = subprocess.Popen([*cmd, *args, "--generator", f"scripted:{slow}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    seen = []
    deadline = time.monotonic() + 120
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if "slot 0 accepted" in line or not line:
            break
    assert any("slot 0 accepted" in s for s in seen), "".join(seen)
    # Slot 1 starts (its first checkpoint is written) only after slot 0's final state is durable.
    wait_until(lambda: _has_checkpoint(tmp_path / "out" / "checkpoints.sqlite", "killed:slot:1"), "slot 1 to start", 120)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)

    fast = tmp_path / "fast.json"
    fast.write_text(json.dumps({"exhausted": "error", "rules": [
        {"match": "Title: First", "replies": []}, {"match": "Title: Second", "replies": [fenced(SECOND)]}]}))
    done = subprocess.run([*cmd, *args, "--generator", f"scripted:{fast}"], capture_output=True, text=True, env=env,
                          timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "killed" / "report.json").read_text())
    assert report["resumed"] and report["summary"]["accepted"] == 2
    assert [s["rounds"] for s in report["slots"]] == [1, 1]


async def _work_s(checkpoint: str, tmp_path: Path, run_id: str) -> float:
    """The working time the plan thread of `run_id` keeps."""
    async with open_checkpointer(checkpoint, default_path=tmp_path / "ck.sqlite", setup=False) as saver:
        plan = await saver.aget_tuple({"configurable": {"thread_id": f"{run_id}:plan", "checkpoint_ns": ""}})
    assert plan is not None
    return float(plan.checkpoint["channel_values"]["work_s"])


def _has_checkpoint(path: Path, thread_id: str) -> bool:
    if not path.exists():
        return False
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        try:
            row = connection.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1", (thread_id,)).fetchone()
        except sqlite3.OperationalError:  # the table is not created yet
            return False
    return row is not None
