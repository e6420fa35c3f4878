"""A failed audit is tested again with fresh seeds added (`confirm_rejection`): a chance win of a
sound template is dropped, a real cue stands; an item check that counts a share of items is pooled
the same way, and one that failed on an item showing its flaw stands.

The sandboxed case replays the audit plan of a real false rejection: the agents tests' well-made
template lost `numeric_rank` on these seeds (2 of 691 such audits lost a solver; one of them failed
the authoring loop test in CI, stop 33).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from itemsmith.sandbox import SandboxPool
from itemsmith.verification.audit import AuditConfig, audit_items, audit_template, confirm_rejection, sandboxed
from itemsmith.verification.audit.core import undecided

from ..agents.conftest import GOOD as LOOP_GOOD
from ..agents.conftest import HANDLER_SOURCE
from .test_audit import draws, good_numeric, symmetric_offsets

# (seed, num_samples) of the first 8 runs of that audit; the audit adds the first seed's other sizes
FALSE_REJECTION_PLAN = [(4137180936270669683, 21), (4500964972837802361, 39), (4163027418600867783, 27),
                        (3226439098260368240, 18), (4225125345483969117, 27), (1971484603705404518, 31),
                        (1536104444531885832, 19), (589814767272353900, 24)]
CONFIRMATION_PLAN = [(7000 + i, 30) for i in range(8)]


def key_moved_to_option_2(share: float):
    """Sound items whose key is moved to option 2 in `share` of them: a position cue worth about
    share * 3/4 over chance."""
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        if rng.random() < share:
            options = item["options"]
            options.insert(1, options.pop(item["answer_index"]))
            item["answer_index"] = 1
        return item
    return make


# what a lucky seed order looks like to the `position` solver (a lean only these seeds have)
leaning_on_option_2 = key_moved_to_option_2(0.2)


# the chance wins these setups record gain 10-15 points: a bar of 0.10 on the gain itself (not its lower
# confidence bound) makes them rejections to confirm
CHANCE_WINS_REJECT = AuditConfig(min_excess=0.10, excess_z=0)


def test_a_chance_win_that_fresh_seeds_do_not_repeat_is_dropped() -> None:
    first = draws(leaning_on_option_2)
    report = audit_items(first, CHANCE_WINS_REJECT)
    assert report.shortcuts == ["position"], report.feedback  # the setup: the lean wins on these seeds
    confirmed = confirm_rejection(report, first, draws(good_numeric, seeds=range(100, 108)), CHANCE_WINS_REJECT)
    assert confirmed.passed and confirmed.feedback is None and not confirmed.shortcuts
    assert confirmed.confirmation_seeds == list(range(100, 108)) and confirmed.confirmation_sizes == [35] * 8
    position = confirmed.solver("position")
    assert position.applicable > report.solver("position").applicable  # tested on the pooled items
    assert position.gain < report.solver("position").gain


def test_a_real_cue_wins_again_and_stands() -> None:
    first = draws(symmetric_offsets)
    report = audit_items(first)
    confirmed = confirm_rejection(report, first, draws(symmetric_offsets, seeds=range(100, 108)))
    assert not confirmed.passed and set(confirmed.shortcuts) == set(report.shortcuts) and confirmed.shortcuts
    assert "numeric_rank" in confirmed.shortcuts and "numeric_rank" in (confirmed.feedback or "")
    assert confirmed.solver("numeric_rank").applicable > report.solver("numeric_rank").applicable


def test_a_cue_on_the_bar_is_undecided_and_more_items_decide_it() -> None:
    # moved in 26 % of items: the position solver gains about 0.17, a hair over the 0.15 bar
    first = draws(key_moved_to_option_2(0.26))
    report = audit_items(first)
    assert report.shortcuts == ["position"]
    once = confirm_rejection(report, first, draws(key_moved_to_option_2(0.26), seeds=range(100, 108)))
    position = once.solver("position")
    assert position.gain_lower < 0.15 <= position.gain and once.passed  # one confirmation clears it...
    assert undecided(report, once, AuditConfig()) == ["position"]  # ...without deciding: another round is drawn
    more = confirm_rejection(report, first, draws(key_moved_to_option_2(0.26), seeds=range(100, 140)))
    assert not more.passed and more.shortcuts == ["position"] and not undecided(report, more, AuditConfig())


def test_a_chance_win_or_a_clear_cue_needs_no_more_rounds() -> None:
    chance = audit_items(draws(leaning_on_option_2), CHANCE_WINS_REJECT)
    cleared = confirm_rejection(chance, draws(leaning_on_option_2), draws(good_numeric, seeds=range(100, 108)),
                                CHANCE_WINS_REJECT)
    assert cleared.passed and not undecided(chance, cleared, CHANCE_WINS_REJECT)
    clear = audit_items(draws(key_moved_to_option_2(0.6)))
    confirmed = confirm_rejection(clear, draws(key_moved_to_option_2(0.6)), draws(key_moved_to_option_2(0.6), seeds=range(100, 108)))
    assert confirmed.shortcuts == ["position"] and not undecided(clear, confirmed, AuditConfig())


def test_only_a_solver_that_won_at_first_can_fail_the_template() -> None:
    # the confirmation alone leans on numeric rank: only solvers that already won are re-judged
    first = draws(leaning_on_option_2)
    report = audit_items(first)
    more = draws(symmetric_offsets, seeds=range(100, 108))
    assert "numeric_rank" not in report.shortcuts and "numeric_rank" in audit_items([*first, *more]).shortcuts
    assert "numeric_rank" not in confirm_rejection(report, first, more).shortcuts


def test_a_failed_item_check_is_not_confirmed_away() -> None:
    def three_options_with_a_lean(rng: np.random.Generator, i: int) -> dict:
        item = leaning_on_option_2(rng, i)
        dropped = next(j for j in range(len(item["options"])) if j != item["answer_index"])
        item["options"].pop(dropped)
        item["answer_index"] -= item["answer_index"] > dropped
        return item  # three options where four are expected: an item check, not a shortcut

    first = draws(three_options_with_a_lean)
    report = audit_items(first)
    assert report.failed_checks == ["option_count"]
    confirmed = confirm_rejection(report, first, draws(good_numeric, seeds=range(100, 108)))
    assert not confirmed.passed and confirmed.failed_checks == report.failed_checks


def _sometimes_keyed_off(share: float):
    def make(rng: np.random.Generator, i: int) -> dict:
        item = good_numeric(rng, i)
        if rng.random() < share:  # keyed with a distractor: no reading of the mean of the series shown
            item["answer_index"] = (item["answer_index"] + 1) % len(item["options"])
        return item
    return make


def test_a_share_near_its_threshold_is_pooled_and_a_clear_one_stands() -> None:
    first = draws(_sometimes_keyed_off(0.3))  # 30 % of keys unmatched, over the 20 % bar
    report = audit_items(first)
    assert "key_is_statistic" in report.failed_checks
    calm = confirm_rejection(report, first, draws(_sometimes_keyed_off(0.0), seeds=range(100, 108)))
    assert calm.passed and "not confirmed on fresh seeds" in next(f.message for f in calm.findings
                                                                  if f.check == "key_is_statistic")
    again = confirm_rejection(report, first, draws(_sometimes_keyed_off(0.3), seeds=range(100, 108)))
    assert not again.passed and again.failed_checks == ["key_is_statistic"]


def test_nothing_won_nothing_is_drawn() -> None:
    first = draws(good_numeric)
    report = audit_items(first)
    assert report.passed and confirm_rejection(report, first, draws(good_numeric, seeds=range(100, 108))) is report


@pytest.fixture(scope="module")
def tiny_pool(tmp_path_factory: pytest.TempPathFactory):
    handler = Path(tmp_path_factory.mktemp("confirmation")) / "tiny_handler.py"
    handler.write_text(HANDLER_SOURCE)
    with SandboxPool(str(handler), workers=2) as pool:
        yield str(handler), pool


def test_the_recorded_false_rejection_is_confirmed_away_and_the_replay_is_exact(tiny_pool) -> None:
    handler, pool = tiny_pool
    report = audit_template(LOOP_GOOD, handler, pool=pool, plan=FALSE_REJECTION_PLAN,
                            confirmation_plan=CONFIRMATION_PLAN, config=CHANCE_WINS_REJECT)
    assert report.passed, report.feedback
    assert report.confirmation_seeds == [s for s, _ in CONFIRMATION_PLAN]  # numeric_rank won at first
    assert report.confirmation_sizes == [n for _, n in CONFIRMATION_PLAN]
    assert report.solver("numeric_rank").applicable > 200  # judged on the pooled items


def test_a_real_shortcut_through_the_sandbox_fails_after_confirmation(tiny_pool) -> None:
    handler, pool = tiny_pool
    middle_key = LOOP_GOOD.replace(
        "key, wrong = numeric_options(float(window.mean()), spread=float(rng.uniform(0.3, 1.0)), decimals=2)",
        "key = round(float(window.mean()), 2)\n        wrong = [round(key + d, 2) for d in (-0.6, 0.6, 1.2)]")
    assert middle_key != LOOP_GOOD
    report = audit_template(middle_key, handler, pool=pool)
    assert not report.passed and "numeric_rank" in report.shortcuts
    assert len(set(report.confirmation_seeds)) == 8  # fresh seeds, the first also at the first seed's other sizes
    assert len(report.confirmation_seeds) == len(report.confirmation_sizes) > 8
    assert not set(report.confirmation_seeds) & set(report.seeds)  # fresh from the OS, not the first plan's


# The cheapest way past a second look: give the cue away on about half the runs only (decided by
# the run's own first draw), so a check that needed every run to lean would see it only by luck.
SOME_RUNS_KEY_FIRST = LOOP_GOOD.replace(
    "    items = []\n", "    items = []\n    lean = rng.random() < 0.5\n", 1).replace(
    "    return items\n",
    "    if lean:\n"
    "        for item in items:\n"
    "            item['options'].insert(0, item['options'].pop(item['answer_index']))\n"
    "            item['answer_index'] = 0\n"
    "    return items\n", 1)


def test_a_cue_on_only_some_seeds_still_stands(tiny_pool) -> None:
    handler, pool = tiny_pool
    plan, confirmation = [(2000 + i, 30) for i in range(8)], [(3000 + i, 30) for i in range(8)]

    def leaning(runs: list[tuple[int, int]]) -> int:
        results = [pool.run(SOME_RUNS_KEY_FIRST, num_samples=n, seed=seed) for seed, n in runs]
        return sum(all(item["answer_index"] == 0 for item in r.items) for r in results)

    assert 0 < leaning(plan) < len(plan) and 0 < leaning(confirmation) < len(confirmation)  # some runs, not all
    report = audit_template(SOME_RUNS_KEY_FIRST, handler, pool=pool, plan=plan, confirmation_plan=confirmation)
    assert report.error is None, report.error
    assert not report.passed and "position" in report.shortcuts, report.feedback
    assert report.confirmation_seeds == [seed for seed, _ in confirmation]


# A sound template whose key is moved to option 2 in a share of its items: a position cue about the bar.
KEY_SECOND_NOW_AND_THEN = LOOP_GOOD.replace(
    "    return items\n",
    "    for item in items:\n"
    "        if rng.random() < 0.26:\n"
    "            item['options'].insert(1, item['options'].pop(item['answer_index']))\n"
    "            item['answer_index'] = 1\n"
    "    return items\n", 1)


def test_an_undecided_cue_is_judged_on_more_rounds_of_fresh_seeds(tiny_pool, monkeypatch) -> None:
    handler, pool = tiny_pool
    rounds = [[(5000 + 100 * r + i, 30) for i in range(8)] for r in range(3)]
    fresh = iter(rounds)
    monkeypatch.setattr(sandboxed, "plan_draws", lambda config: next(fresh))  # the OS's seeds, made fixed
    plan = [(2000 + i, 30) for i in range(8)]
    once = audit_template(KEY_SECOND_NOW_AND_THEN, handler, pool=pool, plan=plan,
                          config=AuditConfig(confirmation_rounds=1))
    fresh = iter(rounds)
    report = audit_template(KEY_SECOND_NOW_AND_THEN, handler, pool=pool, plan=plan)
    first_round = len(once.confirmation_seeds)
    assert first_round > 8 and once.passed  # one round: the cue straddles the bar and passes, undecided
    assert len(report.confirmation_seeds) == first_round + 8  # one more round was drawn, pooled, and decided it
    position = report.solver("position")
    assert position.applicable > once.solver("position").applicable
    assert not report.passed and report.shortcuts == ["position"], report.feedback
