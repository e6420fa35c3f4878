"""The authoring loop with the scripted model and the real sandbox (tiny handler file)."""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from itemsmith.agents.authoring.context import SlotEvent
from itemsmith.agents.authoring.generator import ESCAPE_TEMPERATURE
from itemsmith.agents.authoring.models import RunReport
from itemsmith.agents.authoring.prompts import EXAMPLE_MAX_CHARS, copied_example, describe_examples, nearest_examples
from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig, restarts_broken
from itemsmith.agents.stages.verify import VerificationResult
from itemsmith.items.schema import Decision, StructureReport
from itemsmith.sandbox import SandboxPool

from ..conftest import AVERAGE, BAD_COLUMN, BAD_RANDINT, GOOD, fenced, plan_reply, scripted

TASK = "Questions about water levels"


def run_author(pool: SandboxPool, handler_file: Path, tmp_path: Path, generator: Any, *, titles: list[str],
               **overrides: Any) -> tuple[RunReport, Any, list[SlotEvent]]:
    gen = scripted(generator, timeout_s=overrides.pop("timeout_s", 10.0))
    planner = scripted([plan_reply(titles)])
    events: list[SlotEvent] = []
    settings = {"handler": str(handler_file), "task": TASK, "templates": len(titles), "slots": 1,
                "out_dir": tmp_path / "out", "checkpoint": str(tmp_path / "ck.sqlite"), "run_id": "run1",
                **overrides}
    verifiers = settings.pop("verifiers", ())
    report = asyncio.run(author(AuthorConfig(**settings), generator_model=gen, planner_model=planner,
                                on_event=events.append, pool=pool, verifiers=verifiers))
    return report, gen.model, events


def test_scripted_template_fails_then_passes_after_feedback(pool, handler_file, tmp_path) -> None:
    report, model, events = run_author(pool, handler_file, tmp_path, [fenced(BAD_RANDINT), fenced(GOOD)],
                                       titles=["Highest level"])
    slot = report.slots[0]
    assert slot.status == "accepted" and slot.rounds == 2 and slot.structure_passed_round == 2
    assert [a.status for a in slot.attempts] == ["error", "ok"]
    assert "randint" in slot.attempts[0].error and "rng.integers" in slot.attempts[0].feedback
    # the refinement prompt carries the sandbox error, the failing line and a hint
    assert "randint" in model.prompts[1] and ">>" in model.prompts[1] and "Hint:" in model.prompts[1]
    assert report.structure_pass_rate(1) == 0 and report.structure_pass_rate(2) == 1
    assert slot.template is not None and slot.template.source == GOOD
    assert slot.template.provenance.origin == "generated"
    out = tmp_path / "out" / "run1"
    assert [p.name for p in (out / "templates").iterdir()] == ["00_highest_level.py"]
    saved = json.loads((out / "report.json").read_text())
    assert saved["summary"]["accepted"] == 1 and saved["summary"]["structure_pass_rate_r2"] == 1.0
    phases = [e.phase for e in events]
    assert phases[0] == "queued" and "refining" in phases and phases[-1] == "accepted"
    assert events[-1].input_tokens > 0 and events[-1].output_tokens > 0


def test_scripted_template_discarded_after_round_limit(pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(BAD_COLUMN)], titles=["Broken"],
                                  rounds=3)
    slot = report.slots[0]
    # rounds 2 and 3 resend the failed code: one call each, not run again
    assert slot.status == "discarded" and slot.rounds == 3 and model.calls == 3
    assert [a.status for a in slot.attempts] == ["error", "repeated", "repeated"]
    assert slot.structure_passed_round is None and slot.template is None
    assert slot.decision is not None and not slot.decision.accepted
    assert "KeyError" in slot.attempts[-1].error and "level" in slot.attempts[-1].feedback  # real column named
    assert not list((tmp_path / "out" / "run1" / "templates").iterdir())


def test_round_limit_is_configurable(pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(BAD_COLUMN)], titles=["Broken"],
                                  rounds=1)
    assert report.slots[0].status == "discarded" and model.calls == 1


def test_scripted_provider_timeout_is_retried_then_template_accepted(pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path,
                                  [{"content": fenced(GOOD), "latency_s": 5}, {"error": 503}, fenced(GOOD)],
                                  titles=["Slow"], timeout_s=0.3)
    slot = report.slots[0]
    assert slot.status == "accepted" and slot.rounds == 1 and model.calls == 3
    assert slot.attempts[0].retries == 2 and report.usage.retries == 2


def test_scripted_garbage_replies_become_feedback(pool, handler_file, tmp_path) -> None:
    garbage = ["I'm sorry, I can't write code.", "```python\ndef question(num_samples):\n    return [\n```",
               fenced("rng = np.random.default_rng(1)\n" + GOOD)]
    report, model, _ = run_author(pool, handler_file, tmp_path, [*garbage, fenced(GOOD)], titles=["Garbage"],
                                  rounds=4)
    slot = report.slots[0]
    assert slot.status == "accepted" and slot.rounds == 4
    assert [a.status for a in slot.attempts] == ["extraction_error", "refused", "lint", "ok"]
    assert "```python" in model.prompts[1]  # asked for the format
    assert "SyntaxError" in slot.attempts[1].error and ">>   2 |     return [" in slot.attempts[1].feedback
    assert "do not assign `rng`" in model.prompts[3]


def _renamed_names(source: str) -> str:
    """`source` with every variable, argument and helper function of its own renamed (as a model
    that copies an example and changes the names writes it)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in dir(builtins) and node.id not in ("np", "rng", "handler"):
            node.id = f"my_{node.id}"
        elif isinstance(node, ast.arg):
            node.arg = f"my_{node.arg}"
        elif isinstance(node, ast.FunctionDef) and node.name != "question":
            node.name = f"my_{node.name}"
    return ast.unparse(tree)


def test_scripted_copy_of_the_curated_example_shown_is_sent_back_not_run(pool, handler_file, tmp_path) -> None:
    """The tiny handler has no curated templates, so its slots are shown the real-data handlers'
    nearest the brief: the one shown, reformatted and with a comment, comes back as a copy (one not
    shown is a template like any other); a new template passes."""
    title = "Rainy days in a month"
    shown = nearest_examples(json.loads(plan_reply([title]))[0], "tiny")
    assert len(shown) == 1 and len(shown[0].source) <= EXAMPLE_MAX_CHARS
    example = shown[0]
    copy = "# my template\n" + example.source.replace("    ", "  ")
    prompt = describe_examples(shown)
    assert copied_example(copy, prompt, "tiny") == example and copied_example(copy, "", "tiny") is None
    renamed = _renamed_names(example.source)
    assert renamed != example.source and copied_example(renamed, prompt, "tiny") == example
    assert copied_example(GOOD, prompt, "tiny") is None
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(copy), fenced(GOOD)], titles=[title])
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["copied", "ok"]
    assert repr(example.title) in slot.attempts[0].error and "write a new template" in model.prompts[1]


def test_scripted_empty_reply_is_feedback(pool, handler_file, tmp_path) -> None:
    report, _, _ = run_author(pool, handler_file, tmp_path, ["", fenced(GOOD)], titles=["Empty"])
    assert [a.status for a in report.slots[0].attempts] == ["extraction_error", "ok"]


def test_scripted_permanent_provider_error_errors_the_slot_and_a_rerun_resumes_it(pool, handler_file,
                                                                                  tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path, [{"error": 401}], titles=["Auth"])
    slot = report.slots[0]
    assert slot.status == "errored" and model.calls == 1 and "permanent" in (slot.error or "")
    assert "HTTP 401" in (slot.error or "")  # the provider's own message
    assert report.summary()["errored"] == 1 and report.usage.failed_calls == 1
    resumed, model, _ = run_author(pool, handler_file, tmp_path, [fenced(GOOD)], titles=["Auth"])
    slot = resumed.slots[0]
    assert slot.status == "accepted" and model.calls == 1
    assert slot.rounds == 1  # the failed call did not use up a round
    assert [a.status for a in slot.attempts] == ["provider_error", "ok"]


def fails_then_decides(calls: list[str]) -> Any:
    """A verifier whose first call errors (its model gave no reply), later ones accept."""
    async def flaky(source: str, report: StructureReport) -> VerificationResult:
        calls.append(source)
        if len(calls) == 1:
            return VerificationResult(decision=Decision(accepted=False, stage="judges", reasons=["no reply"]),
                                      feedback="must never reach the generator", errored=True)
        return VerificationResult(decision=Decision(accepted=True, stage="judges", reasons=["fine"]))
    return flaky


def test_scripted_errored_stage_stops_the_slot_without_feedback_and_a_rerun_verifies_the_same_code(
        pool, handler_file, tmp_path) -> None:
    calls: list[str] = []
    verifier = fails_then_decides(calls)
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(GOOD), fenced(AVERAGE)], titles=["Flaky"],
                                  verifiers=[verifier], rounds=3)
    slot = report.slots[0]
    assert slot.status == "errored" and slot.rounds == 1  # no refinement round
    assert [a.status for a in slot.attempts] == ["verify_errored"] and slot.attempts[0].feedback is None
    assert "must never reach the generator" not in "".join(model.prompts)
    resumed, model, _ = run_author(pool, handler_file, tmp_path, [fenced(AVERAGE)], titles=["Flaky"],
                                   verifiers=[verifier], rounds=3)
    slot = resumed.slots[0]
    assert slot.status == "accepted" and model.calls == 0  # the stage ran again on the kept candidate
    assert calls == [GOOD, GOOD] and slot.template is not None and slot.template.source == GOOD


def wants_the_average(seen: list[StructureReport]) -> Any:
    """A verifier that rejects the mean-level template with feedback, and records what it saw."""
    async def picky(source: str, report: StructureReport) -> VerificationResult:
        seen.append(report)
        if "mean water level" in source:
            return VerificationResult(decision=Decision(accepted=False, stage="judges", reasons=["too easy"]),
                                      feedback="Ask about the average level instead.")
        return VerificationResult(decision=Decision(accepted=True, stage="judges", reasons=["fine"]))
    return picky


def test_verifier_rejection_with_feedback_refines(pool, handler_file, tmp_path) -> None:
    seen: list[StructureReport] = []
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(GOOD), fenced(AVERAGE)], titles=["Judge"],
                                  verifiers=[wants_the_average(seen)])
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["verify_rejected", "ok"]
    assert "average level instead" in model.prompts[1]
    # verifiers get the template's items (drawn under a fresh seed by the item audit), at least 20
    # (AuthorConfig.review_items: the students' verdict needs that many), more when the check drew more
    assert seen[0].passed and len(seen[0].items) == max(seen[0].num_samples or 0, 20)
    assert slot.decision is not None and slot.decision.stage == "judges"


def test_scripted_slots_get_distinct_briefs_and_see_accepted_titles(pool, handler_file, tmp_path) -> None:
    script = {"rules": [{"match": "Title: First", "replies": [fenced(GOOD)]},
                        {"match": "Title: Second", "replies": [fenced(GOOD.replace("mean water level", "average water level"))]}]}
    report, model, _ = run_author(pool, handler_file, tmp_path, script, titles=["First", "Second"])
    assert [s.status for s in report.slots] == ["accepted", "accepted"]
    assert "Templates already accepted" in model.prompts[1] and "- First" in model.prompts[1]
    assert len((tmp_path / "out" / "run1" / "templates.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("slots", [1, 2, 4])
def test_scripted_slots_run_concurrently_up_to_the_bound(pool, handler_file, tmp_path, slots) -> None:
    titles = [f"Template {i}" for i in range(4)]
    report, model, events = run_author(pool, handler_file, tmp_path, {"replies": [fenced(GOOD)], "latency_s": 0.4},
                                       titles=titles, slots=slots)
    assert len(report.accepted) == 4 and model.calls == 4
    phase: dict[int, str] = {}
    most = 0
    for event in events:
        phase[event.slot] = event.phase
        most = max(most, sum(p in ("generating", "refining", "checking", "verifying") for p in phase.values()))
    assert most == slots


def test_scripted_repeat_of_failed_code_is_not_run_again_and_the_next_round_samples_hotter(
        pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path,
                                  [fenced(BAD_RANDINT), fenced(BAD_RANDINT), fenced(GOOD)], titles=["Stubborn"])
    slot = report.slots[0]
    assert slot.status == "accepted" and slot.rounds == 3 and model.calls == 3
    assert [a.status for a in slot.attempts] == ["error", "repeated", "ok"]
    assert [a.repeated for a in slot.attempts] == [False, True, False]
    assert slot.attempts[1].check_s == 0  # never sent to the sandbox again
    # round 3 hears why round 1's code failed and that it was resent, and is sampled hotter
    assert "randint" in model.prompts[2] and "exactly the code of round 1" in model.prompts[2]
    assert model.temperatures == [None, None, ESCAPE_TEMPERATURE]
    assert slot.usage.calls == 3 and report.summary()["repeated_rounds"] == 1



def test_scripted_code_that_does_not_run_restarts_without_the_example_and_hotter_the_second_time(
        pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path,
                                  [fenced(BAD_RANDINT), fenced(BAD_COLUMN), fenced(GOOD)], titles=["Highest level"],
                                  restart_broken=True)
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["error", "error", "ok"]
    assert [a.restarted for a in slot.attempts] == [False, True, True] and report.summary()["restarted_rounds"] == 2
    example = "## The working template closest to your brief"
    assert example in model.prompts[0]
    # rounds 2 and 3: the brief again, without the example and without the broken code or its error
    for prompt in model.prompts[1:]:
        assert example not in prompt and "Title: Highest" in prompt
        assert "randint" not in prompt and "KeyError" not in prompt and "Hint:" not in prompt
    # round 3's prompt is round 2's: sampled as cool, it would give round 2's code again
    assert model.temperatures == [None, None, ESCAPE_TEMPERATURE]


def test_scripted_restart_leaves_code_that_runs_to_refinement_and_restarts_hot_without_examples(
        pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(GOOD), fenced(AVERAGE)], titles=["Judge"],
                                  verifiers=[wants_the_average([])], restart_broken=True)
    assert [a.restarted for a in report.slots[0].attempts] == [False, False]
    assert "average level instead" in model.prompts[1]  # a content rejection is refined: that code runs
    report, model, _ = run_author(pool, handler_file, tmp_path / "no-examples", [fenced(BAD_RANDINT), fenced(GOOD)],
                                  titles=["Highest level"], restart_broken=True, examples=0)
    assert [a.restarted for a in report.slots[0].attempts] == [False, True] and "randint" not in model.prompts[1]
    assert model.temperatures == [None, ESCAPE_TEMPERATURE]  # the same prompt as round 1


def test_scripted_resent_code_is_followed_by_a_restart_when_asked(pool, handler_file, tmp_path) -> None:
    report, model, _ = run_author(pool, handler_file, tmp_path, [fenced(GOOD), fenced(GOOD), fenced(AVERAGE)],
                                  titles=["Highest level"], verifiers=[wants_the_average([])], restart_broken=True)
    slot = report.slots[0]
    assert [a.status for a in slot.attempts] == ["verify_rejected", "repeated", "ok"]
    assert [a.restarted for a in slot.attempts] == [False, False, True]
    assert "average level instead" in model.prompts[1]  # the content rejection is refined
    # the resent code is not refined again: round 3 starts from the brief, without the example
    assert "average level instead" not in model.prompts[2] and "## The working template" not in model.prompts[2]
    assert model.temperatures == [None, None, None]  # another prompt than round 1's: no need to sample hotter


@pytest.mark.parametrize(("provider", "configured", "expected"), [
    ("local", None, True), ("openai", None, False), ("scripted", None, False), ("local", False, False),
    ("anthropic", True, True)])
def test_restarts_default_to_on_for_a_local_generator_only(provider: str, configured: bool | None,
                                                           expected: bool) -> None:
    assert restarts_broken(configured, provider) is expected
