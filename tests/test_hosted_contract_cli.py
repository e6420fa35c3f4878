"""The command line against the local fakes of the OpenAI and Anthropic APIs (issue 25, item 8):
author (a gpt-5 generator and planner, judges that reject temperature, gpt-5 and Claude
students) -> release -> evaluate three hosted models (plain) -> calibrate -> adaptive evaluation
-> re-verify with a logprob judge (gpt-4o), each model named by its real id and reached through
the base-URL settings. `itemsmith verify` is not in this tree yet: not run here.

The fakes answer from known items: a student or evaluated model is right with a probability that
rises with its strength (by a fixed draw per model and item), so the ability order is known.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app as cli_app
from itemsmith.items.hashing import item_hash
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.templates_bank.curated import get_curated

from .agents.fake_providers import FakeProviders, fake_env, serve
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


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProviders]:
    items = {render_item(item, TextFormat.plain): (template, item)
             for template, template_items in known_items().items() for item in template_items}
    with serve(FakeProviders(responder=responder(items))) as fake:  # type: ignore[arg-type]
        for name, value in fake_env(fake).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("ITEMSMITH_BACKOFF_INITIAL_S", "0.01")
        monkeypatch.setenv("ITEMSMITH_BACKOFF_MAX_S", "0.05")
        for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_GENERATOR", "ITEMSMITH_PLANNER"):
            monkeypatch.delenv(var, raising=False)
        yield fake


def cli(database_url: str, *args: str, code: int = 0) -> str:
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli_app, [*args, "--db", database_url])
    assert result.exit_code == code, result.output
    return result.stdout


@pytest.mark.slow
def test_fake_hosted_cli_author_release_evaluate_calibrate_adaptive_reverify(
        engine, database_url: str, fakes: FakeProviders, tmp_path: Path) -> None:
    cli(database_url, "bank", "create", "flow", "--handler", "synthetic", "--owner", OWNER)
    authored = json.loads(cli(
        database_url, "author", "--handler", "synthetic", "--task", "patterns in synthetic series", "--templates", "2",
        "--generator", "openai:gpt-5-mini", "--planner", "openai:gpt-5-mini", "--judge", "anthropic:claude-opus-4-7",
        "--judge", "openai:o4-mini", "--student", "openai:gpt-5-nano@1", "--student", "anthropic:claude-haiku-4-5@2",
        "--rounds", "1", "--slots", "2", "--sandbox-workers", "1", "--out", str(tmp_path / "runs"), "--no-live",
        "--bank", "flow", "--json"))
    assert [t["stored"] for t in authored["bank"]["templates"]] == [True, True], authored
    assert not fakes.sent(400) and not fakes.sent(404)  # nothing the APIs reject was sent
    assert all(c.finish in ("stop", "end_turn") for c in fakes.sent(200))  # no reply cut by reasoning

    cli(database_url, "release", "create", "flow", "--by", "curator", "-n", "4")
    reports = {model: json.loads(cli(database_url, "release", "evaluate", "flow@1", "--model", spec, "--json"))
               for model, spec in (("gpt-4o-mini", "openai:gpt-4o-mini"), ("claude-haiku-4-5",
                                                                           "anthropic:claude-haiku-4-5"),
                                   ("gpt-5-nano", "openai:gpt-5-nano"))}
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

    adaptive = json.loads(cli(database_url, "release", "evaluate", "flow@1", "--model", "openai:gpt-4o-mini",
                              "--adaptive", "--seed", str(ADAPTIVE_SEED), "--max-items", str(ADAPTIVE_ITEMS),
                              "--json"))
    assert adaptive["items_used"] >= 1 and adaptive["usage"]["failed_calls"] == 0  # one event loop: no closed loop

    reverified = json.loads(cli(database_url, "release", "reverify", "flow@1", "--judge", "openai:gpt-4o", "--json"))
    assert reverified["errored"] == [] and reverified["usage"]["failed_calls"] == 0
    logprob_calls = [c for c in fakes.sent(200) if c.model == "gpt-4o" and c.body.get("logprobs")]
    assert logprob_calls  # the gpt-4o judge reads its score from log-probabilities
