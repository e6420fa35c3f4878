"""The re-derivation stage with a scripted solver model (real sandbox): a solver that recomputes
the key agrees, a shifted window is caught and quoted for the generator, a solver that cannot
write a running program is reported as not re-derivable (flagged or rejected, never agreement),
a solver call without a usable reply errors the stage (no verdict), the solver never sees the key or the source, and a stored program is reused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from itemsmith.agents.authoring.run import author
from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.stages.rederivation import RederivationVerifier, extract_solver
from itemsmith.items.schema import StructureReport, content_hash
from itemsmith.sandbox import SandboxPool
from itemsmith.verification.rederivation import RederivationConfig
from itemsmith.verification.structure import check_structure

from ..conftest import GOOD, fenced, plan_reply, scripted

MEAN_SOLVER = fenced("def solve(item):\n    values = item['series'][0]['values']\n    return sum(values) / len(values)\n",
                     "The answer is the mean of the values shown:")
# the key is the mean of the window two hours later than the one shown
SHIFTED = GOOD.replace("window = values[start:end]\n", "window = values[start:end]\n        keyed = values[start + 2:end + 2]\n"
                       ).replace("float(window.mean())", "float(keyed.mean())")
# the same flaw under a question naming no statistic the audit recomputes: only the solver can tell
UNNAMED = SHIFTED.replace("What is the mean water level (m)", "Which water level (m) is the balance point")
SMALL = RederivationConfig(seeds=2, small_size=(5, 8), large_size=30)


def _report(source: str, pool: SandboxPool) -> StructureReport:
    return check_structure(source, "unused", num_samples=5, seed=3, pool=pool)


def _stage(pool: SandboxPool, replies: list[str], **config: object) -> tuple[RederivationVerifier, object]:
    solver = scripted(replies, name="solver")
    stage = RederivationVerifier(solver, "scripted:solver", pool, config=SMALL.model_copy(update=config))
    return stage, solver.model


def test_scripted_solver_that_recomputes_the_key_agrees(pool) -> None:
    stage, model = _stage(pool, [MEAN_SOLVER])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert result.decision.accepted and result.decision.stage == "rederivation"
    assert verdict is not None and verdict.status == "agrees" and verdict.agree == verdict.n_items
    assert verdict.n_items >= 30 + 2 * 5 and 30 in verdict.sizes and len(set(verdict.seeds)) == 3
    assert verdict.program is not None and "def solve" in verdict.program and verdict.tries == 1
    assert model.calls == 1


def test_scripted_solver_never_sees_the_key_the_rationale_or_the_source(pool) -> None:
    stage, model = _stage(pool, [MEAN_SOLVER])
    asyncio.run(stage(GOOD, _report(GOOD, pool)))
    prompt = model.prompts[0]
    assert "def question" not in prompt and "numeric_options" not in prompt  # no template source
    assert "the mean of the level column" not in prompt  # the item's rationale
    assert "answer_index" not in prompt and "record_ids" not in prompt  # neither the key nor metadata
    assert "What is the mean water level" in prompt and 'unit "m"' in prompt
    assert "Item 1:" in prompt and "Item 3:" in prompt  # three items of different draws


def test_scripted_solver_catches_a_shifted_window_and_quotes_an_item(pool) -> None:
    stage, _ = _stage(pool, [MEAN_SOLVER])
    result = asyncio.run(stage(SHIFTED, _report(SHIFTED, pool)))
    verdict = result.rederivation
    assert not result.decision.accepted and result.decision.stage == "rederivation"
    assert verdict is not None and verdict.status == "disagrees" and verdict.disagree > verdict.n_items / 2
    feedback = result.feedback or ""
    example = verdict.examples[0]
    assert example.question in feedback and repr(example.options[example.key]) in feedback
    assert f"computed {example.value!r}" in feedback
    assert "confirmed by another program" in (verdict.second_opinion or "") and verdict.programs == 3


MAX_SOLVER = fenced("def solve(item):\n    return max(item['series'][0]['values'])\n")


def test_a_first_program_outvoted_by_a_second_from_other_items_agrees(pool) -> None:
    """N-version: a small solver's wrong program (max for mean) disagrees with a correct key; a
    second program, from other items in a new conversation, agrees: the template is not rejected."""
    stage, model = _stage(pool, [MAX_SOLVER, MEAN_SOLVER], seeds=3)
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert result.decision.accepted and verdict is not None and verdict.status == "agrees"
    assert "program 2, written from other items, agrees" in (verdict.second_opinion or "") and model.calls == 2
    first, second = model.prompts
    assert first != second and "return max" not in second  # other items, and not the first conversation


def test_a_second_opinion_without_a_usable_reply_errors_the_stage_instead_of_rejecting(pool) -> None:
    """The second program could outvote the first: without its reply there is no verdict yet."""
    stage, model = _stage(pool, [MAX_SOLVER, {"error": 400}])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert result.errored and result.rederivation is None and result.feedback is None
    assert model.calls == 2 and "no usable reply" in result.decision.reasons[0]


def test_a_disagreement_no_other_program_confirms_is_flagged_not_rejected(pool) -> None:
    """One program's disagreement is no verdict: the other programs did not run."""
    broken = fenced("def solve(item):\n    return item['no_such_field']\n")
    stage, model = _stage(pool, [MAX_SOLVER, broken, broken])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert result.decision.accepted and verdict is not None and verdict.status == "unconfirmed"
    assert "no other program ran" in (verdict.second_opinion or "")
    assert any("flagged, not rejected" in r for r in result.decision.reasons)
    assert model.calls == 5  # programs 2 and 3: each a broken try and its repeat


MIN_SOLVER = fenced("def solve(item):\n    return min(item['series'][0]['values'])\n")


def test_disagreeing_programs_that_disagree_with_each_other_confirm_nothing(pool) -> None:
    """A solver's mistakes seldom repeat item by item: the maximum and the minimum for a mean both
    disagree with the key, but not with each other's picks."""
    stage, _ = _stage(pool, [MAX_SOLVER, MIN_SOLVER, fenced("def solve(item):\n    return 0.0\n")])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert result.decision.accepted and verdict is not None and verdict.status == "unconfirmed"
    assert "do not agree with each other" in (verdict.second_opinion or "") and verdict.programs == 3


def test_two_programs_making_the_same_mistake_confirm_it(pool) -> None:
    """The residual risk, stated: a mistake two independent programs share item by item rejects."""
    stage, _ = _stage(pool, [MAX_SOLVER])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert not result.decision.accepted and result.rederivation is not None
    assert result.rederivation.status == "disagrees"


# the key written into the question; a solver that takes it from there "re-derives" every item
IN_TEXT = GOOD.replace('f"What is the mean water level (m)', 'f"(the answer is {key}) What is the mean water level (m)')
TEXT_READER = fenced("def solve(item):\n    return numbers_in(item['question'])[0]\n")


def test_a_program_that_reads_the_key_from_the_text_is_caught_by_other_items_series(pool) -> None:
    stage, _ = _stage(pool, [TEXT_READER])
    result = asyncio.run(stage(IN_TEXT, _report(IN_TEXT, pool)))
    verdict = result.rederivation
    assert not result.decision.accepted and verdict is not None and verdict.status == "reads_text"
    assert verdict.data_checked >= 10 and verdict.data_kept_key == verdict.data_checked
    assert "can be read from the text" in (result.feedback or "")


# the cheapest way round the swap: read the key from the text and fail wherever the series do not fit it
SWAP_DODGER = fenced("def solve(item):\n    key = numbers_in(item['question'])[0]\n"
                     "    values = item['series'][0]['values']\n"
                     "    if abs(sum(values) / len(values) - key) > 0.01:\n        raise ValueError('not mine')\n"
                     "    return key\n")


def test_a_program_that_fails_on_other_items_series_proves_nothing_about_the_data(pool) -> None:
    """What it kept on the few swapped items it answered says nothing: it is not re-derived, never agrees."""
    stage, _ = _stage(pool, [SWAP_DODGER])
    verdict = asyncio.run(stage(IN_TEXT, _report(IN_TEXT, pool))).rederivation
    assert verdict is not None and verdict.status == "not_rederivable"
    assert "too few to tell whether it reads the data" in (verdict.error or "")


def test_a_program_that_computes_from_the_series_moves_with_them(pool) -> None:
    stage, _ = _stage(pool, [MEAN_SOLVER])
    verdict = asyncio.run(stage(IN_TEXT, _report(IN_TEXT, pool))).rederivation
    assert verdict is not None and verdict.status == "agrees"
    assert verdict.data_checked >= 10 and verdict.data_kept_key < verdict.data_checked / 2


# the hour of a window's peak, options "hour N": over another item's series the right hour is seldom
# one of this item's options
PEAK_HOUR = GOOD.replace(
    "        key, wrong = numeric_options(float(window.mean()), spread=float(rng.uniform(0.3, 1.0)), decimals=2)\n"
    "        items.append(mc_item(f\"What is the mean water level (m) of record {rid} between hours {start} and \"\n"
    "                             f\"{end - 1}?\", key, wrong,",
    "        top = int(window.argmax())\n"
    "        if (window == window[top]).sum() > 1:\n            continue\n"
    "        others = [h for h in range(len(window)) if h != top]\n"
    "        key, wrong = f\"hour {top}\", [f\"hour {h}\" for h in rng.choice(others, 3, replace=False)]\n"
    "        items.append(mc_item(f\"At which hour of this window of record {rid} is the water level highest?\",\n"
    "                             key, wrong,")
PEAK_SOLVER = fenced("def solve(item):\n    values = item['series'][0]['values']\n"
                     "    return f\"hour {values.index(max(values))}\"\n")


def test_an_answer_that_is_no_option_on_other_items_series_has_moved_with_the_data(pool) -> None:
    """Given another item's series, the program names an hour that is none of this item's options:
    it read the data (before, such answers went uncounted and the template was not re-derivable)."""
    assert PEAK_HOUR != GOOD
    stage, _ = _stage(pool, [PEAK_SOLVER])
    verdict = asyncio.run(stage(PEAK_HOUR, _report(PEAK_HOUR, pool))).rederivation
    assert verdict is not None and verdict.status == "agrees", verdict
    assert verdict.data_checked >= 10 and verdict.data_kept_key < verdict.data_checked / 2


STRICT_PEAK_SOLVER = fenced("def solve(item):\n    values = item['series'][0]['values']\n"
                            "    answer = f\"hour {values.index(max(values))}\"\n"
                            "    if answer not in item['options']:\n"
                            "        raise ValueError('no option for ' + answer)\n    return answer\n")


def test_a_program_that_raises_where_its_answer_is_no_option_still_reads_the_data(pool) -> None:
    """It fails on most items shown with other series (their peak hour is seldom an option), and on
    those it answers it moves off the key: it reads the data. The swap dodger above, which answers
    only where the series fit the key, keeps the key wherever it answers: not re-derivable."""
    stage, _ = _stage(pool, [STRICT_PEAK_SOLVER], large_size=90)  # enough items to answer ten with other series
    verdict = asyncio.run(stage(PEAK_HOUR, _report(PEAK_HOUR, pool))).rederivation
    assert verdict is not None and verdict.status == "agrees", verdict
    assert verdict.data_checked >= 10 and verdict.data_kept_key < verdict.data_checked


def test_scripted_solver_without_a_running_program_is_not_rederivable_and_flagged(pool) -> None:
    broken = fenced("def solve(item):\n    return item['no_such_field']\n")
    stage, model = _stage(pool, [broken, "I cannot do this.", broken])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert verdict is not None and verdict.status == "not_rederivable" and verdict.agree == 0
    assert verdict.tries == 3 and model.calls == 3
    assert result.decision.accepted  # flagged, not rejected (the default) ...
    assert any("not re-derivable" in r for r in result.decision.reasons)  # ... and said so
    assert any("flagged" in r for r in result.decision.reasons)
    retry = model.prompts[1]
    assert "KeyError" in retry and "the mean of the level column" not in retry  # told its own error only ...
    assert "in the line `return item['no_such_field']`" in retry  # ... and the line it broke on


# The 2026-12-05 quick start's solver, verbatim but for the series name: it computed the mean, then
# returned an option by its position; over shuffled options it "disagreed" with a correct key
# (21 of 85 agreed, chance) and the stage rejected the skeleton's own channel_stat template.
POSITION_PICKER = fenced("def solve(item):\n    question = item[\"question\"]\n    options = item[\"options\"]\n"
                         "    series = item[\"series\"][0]\n    values = series[\"values\"]\n"
                         "    mean = np.mean(values)\n    return options[0] if mean == 28.25 else options[1]\n")


def test_scripted_solver_that_picks_an_option_by_position_is_told_and_never_disagrees(pool) -> None:
    stage, model = _stage(pool, [POSITION_PICKER, POSITION_PICKER, POSITION_PICKER])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    verdict = result.rederivation
    assert verdict is not None and verdict.status == "not_rederivable" and verdict.disagree == 0
    assert result.decision.accepted and any("flagged" in r for r in result.decision.reasons)
    assert "another order" in model.prompts[1]  # told why, and tried again ...
    assert model.calls == 2 and "try 2 repeated a failed program" in verdict.error  # ... the same program: no third


def test_scripted_solver_that_fixes_a_position_pick_agrees(pool) -> None:
    stage, model = _stage(pool, [POSITION_PICKER, MEAN_SOLVER])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert result.rederivation is not None and result.rederivation.status == "agrees"
    assert result.rederivation.tries == 2 and model.calls == 2


def test_scripted_solver_not_rederivable_rejects_when_configured(pool) -> None:
    stage, _ = _stage(pool, [fenced("def solve(item):\n    return None\n")], on_not_rederivable="reject")
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert not result.decision.accepted and result.rederivation is not None
    assert result.rederivation.status == "not_rederivable" and "returned None" in (result.rederivation.error or "")


@pytest.mark.parametrize("reply", [{"error": 400}, {"content": "def solve(item):\n    return item[", "finish_reason": "length"}],
                         ids=["permanent-400", "cut"])
def test_scripted_solver_without_a_usable_reply_errors_the_stage_not_not_rederivable(pool, reply: dict) -> None:
    stage, model = _stage(pool, [reply])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert result.errored and not result.decision.accepted and result.rederivation is None  # no verdict
    assert result.feedback is None and result.evidence == []  # nothing reaches the generator or the judges
    assert model.calls == 1 and "no usable reply" in result.decision.reasons[0]  # never re-asked


def test_scripted_solver_cut_after_a_whole_program_uses_it(pool) -> None:
    cut = {"content": MEAN_SOLVER + "\nThis program reads the series of the item and then it", "finish_reason": "length"}
    stage, model = _stage(pool, [cut])
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert not result.errored and model.calls == 1
    assert result.rederivation is not None and result.rederivation.status == "agrees"


def test_a_stored_program_is_reused_without_asking_the_solver(pool) -> None:
    program = extract_solver(MEAN_SOLVER)
    solver = scripted({"replies": [], "exhausted": "error"}, name="solver")
    stage = RederivationVerifier(solver, "scripted:solver", pool, config=SMALL, programs={content_hash(GOOD): program})
    result = asyncio.run(stage(GOOD, _report(GOOD, pool)))
    assert solver.model.calls == 0
    assert result.rederivation is not None and result.rederivation.reused and result.rederivation.status == "agrees"


def test_author_runs_the_rederivation_after_the_audit_and_refines_on_its_feedback(
        pool, handler_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"SEEDS": "2", "LARGE_SIZE": "30", "SMALL_SIZE": "[5, 8]"}.items():
        monkeypatch.setenv(f"ITEMSMITH_REDERIVATION_{name}", value)
    script = tmp_path / "solver.json"
    script.write_text(json.dumps({"replies": [MEAN_SOLVER]}))
    generator = scripted([fenced(UNNAMED), fenced(GOOD)])
    config = AuthorConfig(handler=str(handler_file), task="Questions about water levels", templates=1, slots=1,
                          out_dir=tmp_path / "out", checkpoint="memory", run_id="rederived", rederivation=True,
                          solver=f"scripted:{script}")
    report = asyncio.run(author(config, generator_model=generator, planner_model=scripted([plan_reply(["Level"])]),
                                pool=pool))
    slot = report.slots[0]
    assert slot.status == "accepted" and [a.status for a in slot.attempts] == ["verify_rejected", "ok"]
    first = slot.attempts[0].verification
    assert [r.decision.stage for r in first] == ["audit", "rederivation"] and not first[1].decision.accepted
    assert "independent solver" in generator.model.prompts[1]  # the feedback reached the generator
    assert [s.name for s in report.stages][:3] == ["structure", "audit", "rederivation"]
    assert report.summary()["verification"]["acceptance_by_stage"]["rederivation"]["checked"] == 2
