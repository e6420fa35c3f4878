"""Runaway replies: cut at the output limit or repeating themselves, answered with "too long:
compute it, do not list it" as a failed round, and never run in the sandbox."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from itemsmith.agents.authoring.generator import Generated, shown_reply
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.extract import repetition, runaway
from itemsmith.agents.llm.usage import CallUsage
from itemsmith.items.schema import StructureReport
from itemsmith.sandbox import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.structure import check_structure

from ..conftest import BAD_COLUMN, GOOD, fenced, plan_reply, scripted

MINUTES = ", ".join(f'"{h:02d}:{m:02d}"' for h in range(24) for m in range(60))
# What a small model wrote for "the time of the day's highest reading": every minute typed out,
# one line, until the output limit cut it (the fence never closes).
LISTING = f"```python\ndef question(num_samples):\n    times = [{MINUTES[:4000]}"
# The same runaway spread over lines that differ only in their numbers (a red-team variation).
LINES = "```python\ndef question(num_samples):\n" + "".join(
    f"    if minute == {i}:\n        label = \"{i // 60:02d}:{i % 60:02d}\"  # minute {i} of the day\n"
    for i in range(40))


def test_listing_and_numbered_lines_are_caught_long_real_templates_are_not() -> None:
    assert runaway(LISTING, truncated=True, output_tokens=1500) is not None
    assert "output limit after 1500 tokens" in (runaway(LISTING, truncated=True, output_tokens=1500) or "")
    assert runaway(LISTING, truncated=False) is not None  # a provider that does not say why it stopped
    assert "numbers aside" in (repetition(LINES) or "")
    # every curated template, the longest included (over 6,000 characters), is code, not a listing
    curated = list(load_curated().values())
    assert max(len(t.source) for t in curated) > 6000
    assert [t.id for t in curated if repetition(fenced(t.source)) is not None] == []
    assert runaway(fenced(GOOD), truncated=False) is None
    months = "MONTHS = [" + ", ".join(f'"{m}"' for m in ("January", "February", "March", "April", "May", "June",
                                                          "July", "August", "September", "October", "November",
                                                          "December")) + "]\n"
    assert repetition(fenced(months + GOOD)) is None  # a short table of real names is not a listing


def test_a_truncated_reply_runs_away_even_without_repeats() -> None:
    reply = fenced(GOOD)[:200]
    assert repetition(reply) is None
    assert runaway(reply, truncated=True) == "the reply was cut at the output limit"


def test_only_the_start_of_a_runaway_reply_is_shown_again() -> None:
    usage = CallUsage(provider="scripted", model="m", role="generator", input_tokens=1, output_tokens=1)
    generated = Generated(reply=LINES, source=LINES.split("\n", 1)[1], problem="repeats", usage=usage, runaway=True)
    shown = shown_reply(generated)
    assert shown.startswith("```python\ndef question") and "more lines cut: the reply ran away" in shown
    assert len(shown) < len(LINES) / 2


def _author(pool: SandboxPool, handler_file: Path, tmp_path: Path, replies: list[Any],
            max_rounds: int = 3) -> tuple[Any, Any, list[str]]:
    generator = scripted(replies)
    checked: list[str] = []

    async def checker(source: str) -> StructureReport:
        checked.append(source)
        return await asyncio.to_thread(check_structure, source, str(handler_file), pool=pool)

    config = AuthorConfig(handler=str(handler_file), task="Questions about water levels", templates=1, slots=1,
                          out_dir=tmp_path / "out", checkpoint=str(tmp_path / "ck.sqlite"), run_id="run1",
                          rounds=max_rounds)
    report = asyncio.run(author(config, generator_model=generator, planner_model=scripted([plan_reply(["Peak"])]),
                                checker=checker, pool=pool))
    return report, generator.model, checked


@pytest.mark.parametrize("second", [LISTING, LINES], ids=["exact-repeat", "numbered-variation"])
def test_scripted_runaway_rounds_get_feedback_and_never_reach_the_sandbox(pool, handler_file, tmp_path,
                                                                          second) -> None:
    replies = [{"content": LISTING, "finish_reason": "length"}, second, fenced(GOOD)]
    report, model, checked = _author(pool, handler_file, tmp_path, replies)
    slot = report.slots[0]
    assert slot.status == "accepted" and slot.rounds == 3 and model.calls == 3  # two failed rounds, no extra call
    assert [a.status for a in slot.attempts] == ["runaway", "runaway", "ok"]
    assert checked == [GOOD]  # the runaway replies were never run
    assert "output limit" in (slot.attempts[0].error or "") and "numbers aside" in (slot.attempts[1].error or "")
    for attempt in slot.attempts[:2]:
        assert "too long: compute it, do not list it" in (attempt.feedback or "")
    assert "too long: compute it, do not list it" in model.prompts[1]
    if second == LISTING:  # the exact repeat is named as such
        assert "exactly the code of round 1" in (slot.attempts[1].feedback or "")
    summary = report.summary()
    assert summary["runaway_rounds"] == 2 and summary["accepted"] == 1
    assert summary["input_tokens_per_accepted"] == report.usage.input_tokens
    assert summary["verification"]["acceptance_by_stage"]["structure"]["checked"] == 1  # type: ignore[index]


def test_scripted_repeat_is_never_rerun_and_a_runaway_in_the_hotter_round_after_it_is_caught_too(
        pool, handler_file, tmp_path) -> None:
    replies = [fenced(BAD_COLUMN), fenced(BAD_COLUMN), {"content": LISTING, "finish_reason": "length"}, fenced(GOOD)]
    report, model, checked = _author(pool, handler_file, tmp_path, replies, max_rounds=4)
    slot = report.slots[0]
    assert slot.status == "accepted" and model.calls == 4
    assert [a.status for a in slot.attempts] == ["error", "repeated", "runaway", "ok"]
    assert checked == [BAD_COLUMN, GOOD]  # neither the resent code nor the runaway reached the sandbox
