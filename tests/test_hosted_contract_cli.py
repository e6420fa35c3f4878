"""The command line against the local fakes of the OpenAI and Anthropic APIs,
each model named by its real id and reached through the base-URL settings:

- author (a gpt-5 generator and planner, judges that reject temperature, gpt-5 and Claude
  students) -> release -> evaluate three hosted models (plain) -> calibrate -> adaptive
  evaluation -> re-verify with a logprob judge (gpt-4o) and a reasoning one (o3); every command
  that calls models is given ``--reasoning-budget`` and the fake records the
  ``max_completion_tokens`` each reasoning model received;
- `itemsmith verify` with a hosted solver, judge and students: accepted and rejected by content,
  and errored (exit 3, never "rejected" nor accepted) when the calls give no usable reply: a
  reasoning judge whose replies are cut, a permanent 400 to the students, a 429 window beyond the
  retry bound for the solver.

The fakes answer from known items: a student or evaluated model is right with a probability that
rises with its strength (by a fixed draw per model and item), so the ability order is known.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app as cli_app
from itemsmith.items.hashing import item_hash
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.templates_bank.curated import get_curated

from .agents.llm.fake_providers import FakeProviders, default_responder, fake_env, serve
from .cli.test_verify import SHIFTED_UNNAMED, SOLVER
from .template_sources import WINDOW_MEAN
from .test_pipeline_end_to_end import ADAPTIVE_ITEMS, ADAPTIVE_SEED, AUTHORED, OWNER, known_items, p_correct

STRENGTH = {"gpt-4o-mini": 1.5, "claude-haiku-4-5": 0.0, "gpt-5-nano": -1.5}


def responder(items_by_text: dict[str, tuple[str, object]]) -> object:
    plan = [{"title": t, "category": "patterns", "concept": "patterns", "kind": "mc",
             "question": f"{t}: what is asked about <record>?", "answer_from": "the series", "columns": []}
            for t in AUTHORED]

    def reply(model: str, prompt: str) -> str:
        for title, name in AUTHORED.items():
            if re.search(rf"Title: {title}\b", prompt):
                return f"```python\n{get_curated(name).source}```\n"
        if "Reply with the JSON array" in prompt or "Reply with one JSON array" in prompt:
            return json.dumps(plan)
        if "Criterion: " in prompt:
            return "Clear and answerable from the series.\nScore: 8"
        if "Answer: X" not in prompt or "is not shown" in prompt:
            return "I cannot tell without the data."
        for text, (template, item) in items_by_text.items():
            if text in prompt:
                draw = int.from_bytes(hashlib.sha256(f"{model}:{item_hash(item)}".encode()).digest()[:8],
                                      "big") / 2**64
                right = draw < p_correct(STRENGTH.get(model, 0.0), template)
                letter = item.answer_index if right else (item.answer_index + 1) % len(item.options)
                return f"The series decides it.\nAnswer: {chr(65 + letter)}"
        return "I cannot tell."

    return reply


@contextmanager
def serving(state: FakeProviders, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    """The fakes running, and itemsmith's settings pointing at them."""
    with serve(state) as fake:
        for name, value in fake_env(fake).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ITEMSMITH_BACKOFF_INITIAL_S", "0.01")
        monkeypatch.setenv("ITEMSMITH_BACKOFF_MAX_S", "0.05")
        for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_GENERATOR", "ITEMSMITH_PLANNER"):
            monkeypatch.delenv(var, raising=False)
        yield fake


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    items = {render_item(item, TextFormat.plain): (template, item)
             for template, template_items in known_items().items() for item in template_items}
    with serving(FakeProviders(responder=responder(items)), monkeypatch) as fake:  # type: ignore[arg-type]
        yield fake


def cli(database_url: str, *args: str, code: int = 0) -> str:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli_app, [*args, "--db", database_url])
    assert result.exit_code == code, result.output
    return result.stdout


def max_completion_tokens(fake: FakeProviders, model: str, since: int = 0) -> set[int]:
    """The caps `model` received in the calls after the first `since`."""
    return {c.body["max_completion_tokens"] for c in fake.calls[since:] if c.model == model}


@pytest.mark.slow
def test_fake_hosted_cli_author_release_evaluate_calibrate_adaptive_reverify(
        engine, database_url: str, fakes: FakeProviders, tmp_path: Path) -> None:
    cli(database_url, "bank", "create", "flow", "--handler", "synthetic", "--owner", OWNER)
    authored = json.loads(cli(
        database_url, "author", "--handler", "synthetic", "--task", "patterns in synthetic series", "--templates", "2",
        "--generator", "openai:gpt-5-mini", "--planner", "openai:gpt-5-mini", "--judge", "anthropic:claude-opus-4-7",
        "--judge", "openai:o4-mini", "--student", "openai:gpt-5-nano@1", "--student", "anthropic:claude-haiku-4-5@2",
        "--rounds", "1", "--slots", "2", "--sandbox-workers", "1", "--out", str(tmp_path / "runs"), "--no-live",
        "--reasoning-budget", "judge=5000", "--reasoning-budget", "student=3000", "--bank", "flow", "--json"))
    assert [t["stored"] for t in authored["bank"]["templates"]] == [True, True], authored
    assert not fakes.sent(400) and not fakes.sent(404)  # nothing the APIs reject was sent
    assert all(c.finish in ("stop", "end_turn") for c in fakes.sent(200))  # no reply cut by reasoning
    # the reply budget (512) plus the role's reasoning budget from the command line
    assert max_completion_tokens(fakes, "o4-mini") == {512 + 5000}
    assert max_completion_tokens(fakes, "gpt-5-nano") == {512 + 3000}

    cli(database_url, "release", "create", "flow", "--by", "curator", "-n", "4")
    reports = {}
    for model, spec in (("gpt-4o-mini", "openai:gpt-4o-mini"), ("claude-haiku-4-5", "anthropic:claude-haiku-4-5"),
                        ("gpt-5-nano", "openai:gpt-5-nano")):
        since = len(fakes.calls)
        reports[model] = json.loads(cli(database_url, "release", "evaluate", "flow@1", "--model", spec,
                                        "--reasoning-budget", "student=2500", "--json"))
    assert max_completion_tokens(fakes, "gpt-5-nano", since) == {600 + 2500}
    for report in reports.values():
        usage = report["usage"]
        assert usage["answered_calls"] == report["overall"]["n"] and usage["failed_calls"] == 0
        assert usage["cost_usd"] > 0 and usage["input_tokens"] > 0  # evaluate reports tokens and cost
    by_letter = [c for c in fakes.sent(200) if c.model == "gpt-4o-mini" and c.body.get("logprobs")]
    assert len(by_letter) == reports["gpt-4o-mini"]["overall"]["n"]  # gpt-4o answers by letter likelihood
    assert all(c.body.get("max_completion_tokens") == 1 for c in by_letter)
    billed = sum(c.cost_usd for c in fakes.sent(200) if c.model == "gpt-4o-mini")
    assert reports["gpt-4o-mini"]["usage"]["cost_usd"] == pytest.approx(billed, rel=0.01)

    calibration = json.loads(cli(database_url, "release", "calibrate", "flow@1", "--priors", "--json"))
    ability = {r["respondent"]: r["ability"] for r in calibration["respondents"]}
    assert ability["openai:gpt-4o-mini"] > ability["openai:gpt-5-nano"]

    since = len(fakes.calls)
    adaptive = json.loads(cli(database_url, "release", "evaluate", "flow@1", "--model", "openai:gpt-5-nano",
                              "--adaptive", "--seed", str(ADAPTIVE_SEED), "--max-items", str(ADAPTIVE_ITEMS),
                              "--reasoning-budget", "student=2000", "--json"))
    assert adaptive["items_used"] >= 1 and adaptive["usage"]["failed_calls"] == 0  # one event loop: no closed loop
    assert max_completion_tokens(fakes, "gpt-5-nano", since) == {600 + 2000}

    reverified = json.loads(cli(database_url, "release", "reverify", "flow@1", "--judge", "openai:gpt-4o",
                                "--judge", "openai:o3", "--reasoning-budget", "judge=4500", "--json"))
    assert reverified["errored"] == [] and reverified["usage"]["failed_calls"] == 0
    logprob_calls = [c for c in fakes.sent(200) if c.model == "gpt-4o" and c.body.get("logprobs")]
    assert logprob_calls  # the gpt-4o judge reads its score from log-probabilities
    assert max_completion_tokens(fakes, "o3") == {600 + 4500}


def verify_responder(model: str, prompt: str) -> str:
    """The solver writes the mean of the values shown; judges score 8; students answer A, blind
    ones cannot tell."""
    if "Write solve(item)." in prompt:
        return f"The answer is the mean of the values shown.\n{SOLVER}"
    if "is not shown" in prompt:
        return "I cannot tell without the data."
    return default_responder(model, prompt)


@pytest.fixture
def verify_fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    monkeypatch.setenv("ITEMSMITH_REDERIVATION_LARGE_SIZE", "30")
    with serving(FakeProviders(responder=verify_responder), monkeypatch) as fake:
        yield fake


def verify(tmp_path: Path, source: str, *args: str, code: int) -> dict:
    template = tmp_path / "template.py"
    template.write_text(source)
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli_app, ["verify", str(template), "--handler", "synthetic",
                                                                *args, "--json"])
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


HOSTED_PANEL = ("--solver", "openai:gpt-5-mini", "--judge", "anthropic:claude-opus-4-7", "--student",
                "openai:gpt-5-nano@1", "--student", "anthropic:claude-haiku-4-5@2")


@pytest.mark.slow
def test_fake_hosted_verify_accepts_and_rejects_by_content(verify_fakes: FakeProviders, tmp_path: Path) -> None:
    accepted = verify(tmp_path, WINDOW_MEAN, *HOSTED_PANEL, code=0)
    assert accepted["accepted"] and not accepted["errored"] and accepted["stage"] is None
    assert [accepted["stages"][s]["accepted"] for s in ("rederivation", "judges", "students")] == [True] * 3
    assert accepted["stages"]["rederivation"]["verdict"]["status"] == "agrees"
    usage = accepted["usage"]
    assert usage["calls"] == usage["answered_calls"] == len(verify_fakes.sent(200)) and usage["cost_usd"] > 0
    assert not verify_fakes.sent(400) and all(c.finish in ("stop", "end_turn") for c in verify_fakes.calls)

    rejected = verify(tmp_path, SHIFTED_UNNAMED, *HOSTED_PANEL, code=1)  # the solver's value fits another option
    assert not rejected["accepted"] and not rejected["errored"] and rejected["stage"] == "rederivation"
    assert rejected["stages"]["rederivation"]["accepted"] is False
    assert rejected["stages"]["rederivation"]["verdict"]["status"] == "disagrees"


@pytest.mark.slow
def test_fake_hosted_verify_reasoning_judge_cut_errors_the_stage_and_the_budget_flag_fixes_it(
        verify_fakes: FakeProviders, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_REASONING_EFFORT", "high")  # the fake reasons 4000 tokens
    args = ("--judge", "openai:gpt-5-mini", "--no-students", "--no-rederivation")
    cut = verify(tmp_path, WINDOW_MEAN, *args, "--reasoning-budget", "judge=0", code=3)
    assert cut["errored"] and not cut["accepted"] and cut["stage"] == "judges"
    judges = cut["stages"]["judges"]
    assert judges["errored"] and judges["accepted"] is None and "no verdict" in judges["reasons"][0]
    assert cut["usage"]["cut_calls"] == cut["usage"]["calls"] > 0 and cut["usage"]["answered_calls"] == 0
    assert all(c.finish == "length" for c in verify_fakes.calls)
    assert max_completion_tokens(verify_fakes, "gpt-5-mini") == {512}

    since = len(verify_fakes.calls)
    room = verify(tmp_path, WINDOW_MEAN, *args, "--reasoning-budget", "judge=6000", code=0)
    assert room["accepted"] and room["usage"]["cut_calls"] == 0
    assert max_completion_tokens(verify_fakes, "gpt-5-mini", since) == {512 + 6000}


@pytest.mark.slow
def test_fake_hosted_verify_permanent_400_to_the_students_is_no_verdict_and_never_re_sent(
        verify_fakes: FakeProviders, tmp_path: Path) -> None:
    verify_fakes.flagged = "mean value of the series"  # in every item's question: OpenAI refuses the prompts
    out = verify(tmp_path, WINDOW_MEAN, "--no-judges", "--no-rederivation", "--student", "openai:gpt-4o-mini@1",
                 "--student", "openai:gpt-5-nano@2", code=3)
    assert out["errored"] and out["stage"] == "students" and out["stages"]["students"]["errored"]
    verdict = out["stages"]["students"]["verdict"]
    assert verdict["responses"] == [] and verdict["failed"]  # nothing stored as a wrong answer
    refused = verify_fakes.sent(400)
    assert refused and len(refused) == len(verify_fakes.calls) == out["usage"]["failed_calls"]
    bodies = [json.dumps(c.body, sort_keys=True) for c in refused]
    assert len(set(bodies)) == len(bodies)  # a permanent 400 is sent once, never re-asked


@pytest.mark.slow
def test_fake_hosted_verify_429_beyond_the_wait_bound_errors_the_rederivation(
        verify_fakes: FakeProviders, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_MAX_RETRY_WAIT_S", "1")
    verify_fakes.rate_limit_for(120)
    out = verify(tmp_path, WINDOW_MEAN, *HOSTED_PANEL, code=3)
    assert out["errored"] and out["stage"] == "rederivation" and not out["accepted"]
    rederivation = out["stages"]["rederivation"]
    assert rederivation["errored"] and rederivation["verdict"] is None  # no "not re-derivable" verdict
    assert "wait bound" in rederivation["reasons"][0]
    assert not out["stages"]["judges"]["ran"] and not out["stages"]["students"]["ran"]
    assert {c.status for c in verify_fakes.calls} == {429} and out["usage"]["failed_calls"] == 1
