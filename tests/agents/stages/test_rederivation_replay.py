"""The re-derivation stage replays block items in trusted code before it asks a model (real sandbox,
scripted solver model that must not be called, or that is called only where the replay cannot
vouch): a correct block template agrees with no model call, a key swapped after the block call is
rejected with the item quoted, and a question edited after the call goes to the solver model."""

from __future__ import annotations

import asyncio

from itemsmith.agents.stages.rederivation import RederivationVerifier
from itemsmith.items.schema import StructureReport
from itemsmith.sandbox import SandboxPool
from itemsmith.verification.block_replay import REPLAY_SOLVER
from itemsmith.verification.rederivation import RederivationConfig
from itemsmith.verification.structure import check_structure

from ..conftest import fenced, scripted

BLOCKS = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    for _ in range(50 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "level", min_length=12, max_length=24)
        if win is None:
            continue
        item = ask(channel_stat(win, "mean"))
        if item is not None:
            EDIT
            items.append(item)
    return items
'''
GOOD_BLOCKS = BLOCKS.replace("EDIT", "pass")
SWAPPED = BLOCKS.replace("EDIT", 'item["answer_index"] = (item["answer_index"] + 1) % len(item["options"])')
RETOLD = BLOCKS.replace("EDIT", 'item["question"] = "Roughly, " + item["question"]')
MEAN_SOLVER = fenced("def solve(item):\n    values = item['series'][0]['values']\n    return sum(values) / len(values)\n")
SMALL = RederivationConfig(seeds=2, small_size=(5, 8), large_size=30)


def _report(source: str, pool: SandboxPool) -> StructureReport:
    return check_structure(source, "unused", num_samples=5, seed=3, pool=pool)


def _stage(pool: SandboxPool, replies: list[str]) -> tuple[RederivationVerifier, object]:
    solver = scripted(replies, name="solver")
    return RederivationVerifier(solver, "scripted:solver", pool, config=SMALL, seed=11), solver.model


def test_a_correct_block_template_is_replayed_and_agrees_without_a_model(pool: SandboxPool) -> None:
    stage, model = _stage(pool, [])
    result = asyncio.run(stage(GOOD_BLOCKS, _report(GOOD_BLOCKS, pool)))
    verdict = result.rederivation
    assert result.decision.accepted, result.decision.reasons
    assert verdict is not None and verdict.status == "agrees" and verdict.replayed
    assert verdict.solver == REPLAY_SOLVER and verdict.agree == verdict.n_items >= 30 + 2 * 5
    assert model.calls == 0  # type: ignore[attr-defined]
    assert result.evidence[0].corroborates and "recorded building-block call" in result.evidence[0].text


def test_a_key_swapped_after_the_block_call_is_rejected_with_the_item(pool: SandboxPool) -> None:
    stage, model = _stage(pool, [])
    result = asyncio.run(stage(SWAPPED, _report(SWAPPED, pool)))
    verdict = result.rederivation
    assert not result.decision.accepted and verdict is not None and verdict.status == "disagrees"
    assert verdict.replayed and verdict.disagree == verdict.n_items and model.calls == 0  # type: ignore[attr-defined]
    assert result.feedback is not None and "building-block call" in result.feedback
    assert verdict.examples[0].question in result.feedback and "the block computes" in result.feedback


def test_a_question_edited_after_the_call_goes_to_the_solver_model(pool: SandboxPool) -> None:
    stage, model = _stage(pool, [MEAN_SOLVER])
    result = asyncio.run(stage(RETOLD, _report(RETOLD, pool)))
    verdict = result.rederivation
    assert verdict is not None and not verdict.replayed and verdict.solver == "scripted:solver"
    assert model.calls == 1 and verdict.status == "agrees"  # type: ignore[attr-defined]


def test_without_a_solver_model_block_items_are_still_replayed_and_the_rest_pass_unchecked(pool: SandboxPool) -> None:
    """Offline with no solver installed the stage runs on the replay alone: a wrong block key is
    still rejected, a correct one agrees, and a template the replay cannot vouch for passes with
    the reason said (no verdict either way), never rejected for lack of a model."""
    stage = RederivationVerifier(None, REPLAY_SOLVER, pool, config=SMALL, seed=11)
    good = asyncio.run(stage(GOOD_BLOCKS, _report(GOOD_BLOCKS, pool)))
    assert good.decision.accepted and good.rederivation is not None and good.rederivation.replayed
    swapped = asyncio.run(stage(SWAPPED, _report(SWAPPED, pool)))
    assert not swapped.decision.accepted and swapped.rederivation is not None
    assert swapped.rederivation.status == "disagrees"
    retold = asyncio.run(stage(RETOLD, _report(RETOLD, pool)))
    assert retold.decision.accepted and retold.rederivation is None
    assert "not re-derived: no solver model" in retold.decision.reasons[0]
