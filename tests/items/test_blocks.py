"""The building blocks: each value recomputed independently (pandas on the raw frame) on random
data, dates aligned with values, and a window off by one always told apart; a template made of
blocks passes the structure check in the sandbox."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from itemsmith.items.blocks import (
    KEY_PATIENCE,
    align_window,
    ask,
    bind_blocks,
    change_between,
    channel_stat,
    compare_windows,
    count_beyond,
    draw_threshold,
    first_day,
    take_window,
    take_windows,
    written_calls,
)
from itemsmith.items.helpers import mc_item, numeric_options
from itemsmith.items.reasoning_blocks import trend
from itemsmith.items.schema import Item
from itemsmith.sandbox.handler_data import HandlerView
from itemsmith.verification.audit import ItemDraw, audit_items

HOWS = {"max": lambda s: s.max(), "min": lambda s: s.min(), "mean": lambda s: s.mean(),
        "median": lambda s: s.median(), "sum": lambda s: s.sum(), "range": lambda s: s.max() - s.min(),
        "std": lambda s: s.std(ddof=0)}


class RandomHandler:
    """Records of random daily temperatures and rain (unit-declaring, like a handler with `units`)."""

    name = "random"
    description = "random daily weather"
    units = {"temp": "°C", "rain": "mm"}

    def __init__(self, seed: int, n_records: int = 6, length: int = 90) -> None:
        rng = np.random.default_rng(seed)
        self.frames = {
            f"r{i}": pd.DataFrame({"temp": np.round(rng.normal(12, 6, length), 1),
                                   "rain": np.round(rng.exponential(2, length), 2)},
                                  index=pd.date_range(f"202{i % 5}-03-01", periods=length, freq="D", name="date"))
            for i in range(n_records)}

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": list(self.frames)})

    def series(self, record_id: Any) -> pd.DataFrame:
        return self.frames[record_id].copy()


class NoUnits(RandomHandler):
    units = None  # type: ignore[assignment]


def _raw(handler: RandomHandler, window: Any) -> pd.Series:
    """The window's rows, read from the raw frame by position (the independent truth)."""
    return handler.frames[window.record_id][window.channel].iloc[window.start:window.end]


@pytest.mark.parametrize("seed", range(5))
def test_a_window_is_the_frames_rows_with_their_own_dates_and_unit(seed: int) -> None:
    handler = RandomHandler(seed)
    rng = np.random.default_rng(seed)
    for rid in handler.frames:
        win = take_window(handler, rid, "temp", rng=rng)
        assert win is not None and 10 <= len(win.values) <= 60
        raw = _raw(handler, win)
        assert win.values.tolist() == raw.tolist()
        assert win.dates == [d.strftime("%Y-%m-%d") for d in raw.index]
        assert win.shown == {"name": "temp", "values": raw.tolist(), "timestamps": win.dates, "unit": "°C"}
        assert (win.first, win.last) == (win.dates[0], win.dates[-1]) and "°C" in win.about
        with pytest.raises(ValueError):
            win.values[0] = 0.0  # read-only: nothing can change what the blocks compute from


def test_window_bounds_missing_channel_short_record_and_gaps_give_none() -> None:
    handler = RandomHandler(1)
    rng = np.random.default_rng(0)
    assert take_window(handler, "r0", "pressure", rng=rng) is None
    assert take_window(handler, "r0", "temp", rng=rng, length=91) is None
    assert take_window(handler, "r0", "temp", rng=rng, start=85, length=6) is None
    fixed = take_window(handler, "r0", "temp", rng=rng, start=5, length=7)
    assert fixed is not None and (fixed.start, fixed.end) == (5, 12)
    rest = take_window(handler, "r0", "temp", rng=rng, start=80)
    assert rest is not None and len(rest.values) == 10
    handler.frames["r0"].iloc[20, 0] = np.nan
    assert take_window(handler, "r0", "temp", rng=rng, start=15, length=10) is None
    assert take_window(handler, "r0", "temp", rng=rng, start=21, length=10) is not None


def test_units_fall_back_to_none_without_a_declaration_and_pass_through_the_sandbox_view() -> None:
    rng = np.random.default_rng(0)
    win = take_window(NoUnits(2), "r1", "temp", rng=rng)
    assert win is not None and win.unit == "" and "unit" not in win.shown
    viewed = take_window(HandlerView(RandomHandler(2)), "r1", "temp", rng=rng)  # the view a template sees
    assert viewed is not None and viewed.unit == "°C" and viewed.shown["unit"] == "°C"


@pytest.mark.parametrize("seed", range(8))
def test_every_statistic_equals_an_independent_recomputation(seed: int) -> None:
    handler = RandomHandler(seed)
    rng = np.random.default_rng(100 + seed)
    for rid in handler.frames:
        win = take_window(handler, rid, "temp", rng=rng)
        raw = _raw(handler, win)
        for how, truth in HOWS.items():
            result = channel_stat(win, how)
            if how in ("max", "min") and (raw == truth(raw)).sum() > 1:
                assert result is None  # a tied extreme has no single day
                continue
            assert result is not None and result.value == pytest.approx(float(truth(raw)), abs=1e-9)
            assert result.shown == [win.shown] and result.unit == "°C"
            if how in ("max", "min"):
                at = raw.idxmax() if how == "max" else raw.idxmin()
                assert result.day == at.strftime("%Y-%m-%d") and result.day in result.rationale


@pytest.mark.parametrize("seed", range(8))
def test_a_window_off_by_one_gives_a_different_value(seed: int) -> None:
    """The cheapest wrong template: the right statistic over the rows one later (or the values with
    their dates one off). The block's answer differs from both."""
    handler = RandomHandler(seed)
    rng = np.random.default_rng(seed)
    win = take_window(handler, "r2", "temp", rng=rng, length=20)
    if win.end == 90:
        win = take_window(handler, "r2", "temp", rng=rng, start=win.start - 1, length=20)
    shifted = handler.frames["r2"]["temp"].iloc[win.start + 1:win.end + 1]
    for how in ("mean", "sum", "std"):
        assert channel_stat(win, how).value != pytest.approx(float(HOWS[how](shifted)), abs=1e-9)
    assert change_between(win).value != pytest.approx(float(shifted.iloc[-1] - shifted.iloc[0]), abs=1e-9)
    peak = channel_stat(win, "max")
    if peak is not None:
        misaligned_dates = [d.strftime("%Y-%m-%d") for d in shifted.index]
        assert peak.day != misaligned_dates[int(np.argmax(win.values))]


@pytest.mark.parametrize("seed", range(6))
def test_counts_changes_and_first_days_match_a_plain_loop(seed: int) -> None:
    handler = RandomHandler(seed)
    rng = np.random.default_rng(seed)
    win = take_window(handler, "r3", "rain", rng=rng)
    raw = _raw(handler, win)
    threshold = float(raw.iloc[len(raw) // 2])  # a value in the window: equality is not "above"
    assert count_beyond(win, above=threshold).value == sum(1 for v in raw if v > threshold)
    assert count_beyond(win, below=threshold).value == sum(1 for v in raw if v < threshold)
    i, j = 2, len(raw) - 3
    assert change_between(win, i, j).value == pytest.approx(raw.iloc[j] - raw.iloc[i])
    assert change_between(win, i, j).day == raw.index[j].strftime("%Y-%m-%d")
    expected = next((d.strftime("%Y-%m-%d") for d, v in raw.items() if v > threshold), None)
    found = first_day(win, above=threshold)
    assert (found.value if found else None) == expected
    assert first_day(win, above=float(raw.max())) is None
    with pytest.raises(ValueError, match="exactly one"):
        count_beyond(win)
    with pytest.raises(ValueError, match="exactly one"):
        first_day(win, above=1.0, below=2.0)


def test_comparisons_name_the_larger_channel_record_or_span_and_refuse_ties() -> None:
    handler = RandomHandler(4)
    rng = np.random.default_rng(4)
    temp = take_window(handler, "r1", "temp", rng=rng)
    rain = align_window(handler, temp, "rain")
    assert rain is not None and rain.dates == temp.dates and rain.values.tolist() == _raw(handler, rain).tolist()
    both = compare_windows(temp, rain, "mean")
    truth = _raw(handler, temp).mean() - _raw(handler, rain).mean()
    assert both.value == pytest.approx(truth) and both.label == ("temp" if truth > 0 else "rain")
    assert [s["name"] for s in both.shown] == ["temp", "rain"] and both.unit == ""  # units differ
    other = take_window(handler, "r4", "temp", rng=rng, start=temp.start, length=len(temp.values))
    records = compare_windows(temp, other, "max")
    if records is not None:
        assert records.label == ("r1" if _raw(handler, temp).max() > _raw(handler, other).max() else "r4")
    assert compare_windows(temp, temp, "mean") is None  # a tie has no larger one
    with pytest.raises(ValueError, match="how must be one of"):
        channel_stat(temp, "variance")  # no standard deviation: no word for it


@pytest.mark.parametrize(("written", "meant"), [("average", "mean"), ("more_variable", "std"), ("Standard deviation", "std"),
                                                ("more-variable", "std"), ("higher", "mean"), ("maximum", "max")])
def test_the_words_a_model_writes_for_a_statistic_compute_that_statistic(written: str, meant: str) -> None:
    handler = RandomHandler(4)
    rng = np.random.default_rng(4)
    temp = take_window(handler, "r1", "temp", rng=rng)
    other = take_window(handler, "r4", "temp", rng=rng, start=temp.start, length=len(temp.values))
    said, exact = compare_windows(temp, other, written), compare_windows(temp, other, meant)
    if exact is None:
        assert said is None
        return
    assert said is not None and (said.value, said.question, said.label) == (exact.value, exact.question, exact.label)
    assert said.call is not None and said.call["args"]["how"] == written  # the replay calls what the template wrote


def test_a_comparison_word_that_is_no_statistic_or_several_windows_name_the_call_that_asks_it() -> None:
    handler = RandomHandler(4)
    temp = take_window(handler, "r1", "temp", rng=np.random.default_rng(4))
    hint = r'compare\(win, take_windows\(handler, win, 3\), "higher"\|"more_variable"'
    with pytest.raises(ValueError, match=hint):
        compare_windows(temp, temp, "trends_more")
    others = take_windows(handler, temp, 3, rng=np.random.default_rng(5))  # as a 1.5B planner wrote it
    with pytest.raises(ValueError, match="got a list; to ask which of several windows .* call " + hint):
        compare_windows(temp, others, "more_variable")


def test_block_results_build_valid_items_whose_key_is_the_value() -> None:
    handler = RandomHandler(7)
    rng = np.random.default_rng(7)
    blocks = bind_blocks(rng)
    win = blocks["take_window"](handler, "r0", "temp")
    result = channel_stat(win, "mean")
    key, wrong = numeric_options(result.value, rng=rng, spread=result.spread, decimals=result.decimals,
                                 unit=result.unit)
    item = Item.model_validate(mc_item(f"Mean {win.about}?", key, wrong, rng=rng, series=result.shown,
                                       rationale=result.rationale))
    assert item.answer == f"{result.value:.{result.decimals}f}°C" and item.answer in item.rationale


def test_ask_makes_the_item_of_each_block_with_the_key_at_a_uniform_rank() -> None:
    handler = RandomHandler(3, n_records=6, length=200)
    rng = np.random.default_rng(3)
    ranks: dict[str, list[int]] = {}
    for _ in range(800):
        win = take_window(handler, f"r{int(rng.integers(6))}", "temp", rng=rng, min_length=20, max_length=60)
        median = float(np.median(win.values))
        for result in (channel_stat(win, "mean"), count_beyond(win, median), first_day(win, above=median + 4),
                       change_between(win, 2, -3)):
            raw = ask(result, rng=rng)
            if raw is None:
                continue
            item = Item.model_validate(raw)
            assert item.question == result.question and item.series[0].values == list(win.values)
            assert item.metadata["record_ids"] == [win.record_id] and item.rationale == result.rationale
            if result.how.startswith("first"):
                assert item.answer == result.value and all(o in win.dates for o in item.options)
                order = sorted(item.options)
            else:
                assert float(item.answer.removesuffix("°C")) == pytest.approx(result.value, abs=10 ** -result.decimals)
                order = sorted(item.options, key=lambda o: float(o.removesuffix("°C")))
            ranks.setdefault(result.how.split()[0], []).append(order.index(item.answer))
    for how, seen in ranks.items():  # each rank about a quarter of the time
        shares = np.bincount(seen, minlength=4) / len(seen)
        assert len(seen) > 100 and shares.min() > 0.15, (how, shares)
    assert ask(None, rng=rng) is None


@pytest.mark.parametrize("seed", range(3))
def test_ask_draws_a_statistics_distractors_from_the_records_other_windows(seed: int) -> None:
    """Recomputed with pandas on the raw frame: every distractor of a mean, a count or a change is
    the same computation on another window of the record of the same length (so keys and distractors
    come from one distribution), and no two options read alike."""
    handler = RandomHandler(seed, n_records=3, length=80)
    rng = np.random.default_rng(seed)
    for _ in range(40):
        win = take_window(handler, f"r{int(rng.integers(3))}", "temp", rng=rng, min_length=10, max_length=30)
        raw = handler.frames[win.record_id]["temp"]
        n = len(win.values)
        others = {"mean": raw.rolling(n).mean().iloc[n - 1:],
                  "count": raw.gt(12.0).astype(float).rolling(n).sum().iloc[n - 1:],
                  "change": raw.rolling(n).apply(lambda v: v.iloc[-2] - v.iloc[1]).iloc[n - 1:]}
        for result, recomputed in ((channel_stat(win, "mean"), others["mean"]),
                                   (count_beyond(win, above=12.0), others["count"]),
                                   (change_between(win, 1, -2), others["change"])):
            raw_item = ask(result, rng=rng)
            if raw_item is None:  # two options read alike: the item is dropped, never one option redrawn
                continue
            item = Item.model_validate(raw_item)
            elsewhere = np.array([v for start, v in enumerate(recomputed) if start != win.start])
            wrong = [float(o.removesuffix("°C")) for o in item.options if o != item.answer]
            half_unit = 0.5 * 10.0 ** -result.decimals + 1e-9  # an option is the value, rounded
            assert len(set(item.options)) == 4 and all(np.abs(elsewhere - w).min() <= half_unit for w in wrong)


def test_ask_reads_three_windows_of_a_long_record() -> None:
    handler = RandomHandler(1, n_records=1, length=20_000)
    rng = np.random.default_rng(1)
    result = channel_stat(take_window(handler, "r0", "temp", rng=rng, length=24), "mean")
    calls: list[int] = []

    def counted(values: np.ndarray) -> float:
        calls.append(len(values))
        return float(values.mean())

    item = Item.model_validate(ask(dataclasses.replace(result, recompute=counted), rng=rng))
    assert len(item.options) == 4 and calls == [24, 24, 24]


class SeasonalHandler(RandomHandler):
    """A year of daily temperatures in monthly records: most months lie wholly above or below a
    fixed threshold, so a count over a week takes few values and they recur."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        days = pd.date_range("2021-01-01", periods=365 * 2, freq="D", name="date")
        temp = 11 - 9 * np.cos(2 * np.pi * days.dayofyear / 365) + rng.normal(0, 3, len(days))
        rain = np.where(rng.random(len(days)) < 0.5, 0.0, np.round(rng.exponential(4, len(days)), 1))
        frame = pd.DataFrame({"temp": np.round(temp, 1), "rain": rain}, index=days)
        self.frames = dict(tuple(frame.groupby(frame.index.strftime("%Y-%m"))))


def _audited_counts(handler: SeasonalHandler, make: Any, channel: str = "temp", length: int | None = 7) -> Any:
    return audit_items(_drawn(handler, make, channel, length))


def _drawn(handler: SeasonalHandler, make: Any, channel: str = "temp", length: int | None = 7) -> list[ItemDraw]:
    """8 seeds of 30 items of `make(win, rng)` over random windows (a None draws again)."""
    ids = list(handler.frames)
    draws = []
    for seed in range(8):
        rng = np.random.default_rng([5, seed])
        items: list[Item] = []
        while len(items) < 30:
            win = take_window(handler, ids[int(rng.integers(len(ids)))], channel, rng=rng, length=length)
            raw = make(win, rng)
            if raw is not None:
                items.append(Item.model_validate(raw))
        draws.append(ItemDraw(seed=seed, num_samples=30, items=items))
    return draws


def _distinct_values_uniformly(win: Any, rng: np.random.Generator) -> dict[str, Any] | None:
    """The control: a count above 11 with distractors drawn uniformly from the other values the
    record's weeks take (so a colliding draw is redrawn), the rule `ask` replaced."""
    result = count_beyond(win, above=11.0)
    others = sorted({int((win.record[s:s + 7] > 11.0).sum()) for s in range(len(win.record) - 6)} - {result.value})
    if len(others) < 3:
        return None
    wrong = [str(others[int(i)]) for i in rng.choice(len(others), size=3, replace=False)]
    return mc_item(result.question, str(result.value), wrong, rng=rng, series=result.shown,
                   rationale=result.rationale, metadata={"record_ids": [win.record_id]})


def _shortcuts(report: Any) -> set[str]:
    return {solver.solver for solver in report.solvers if solver.shortcut}


def _gain(report: Any, solver: str) -> float:
    return next(s.gain for s in report.solvers if s.solver == solver)


def test_a_weeks_count_keeps_no_cue_in_its_options_where_a_redrawn_distractor_would() -> None:
    """The cheapest way to pass a count's options off as fair: draw the distractors from the other
    values the record's windows take, redrawing any that reads like the key. A count over a week
    takes few values, the frequent ones are then keys more often than distractors, and a blind
    solver picks them from the options (here: the one nearest the others' mean, about ten points
    over chance on held-out items: a cue, if a small one). `ask` keeps or drops the whole item by a
    rule blind to which option is the key: the same count leaves that solver nothing, at a fixed
    threshold and at one drawn per item, and the audit passes both (fixed seeds). That few weeks
    of a seasonal record make items recur at a fixed threshold is the item pool's business, a
    property the report states, not a rejection."""
    handler = SeasonalHandler(3)
    control = _audited_counts(handler, _distinct_values_uniformly)
    assert _gain(control, "centre") > 0.08
    fixed = _audited_counts(handler, lambda win, rng: ask(count_beyond(win, above=11.0), rng=rng))
    drawn = _audited_counts(handler, lambda win, rng: ask(count_beyond(win, above=draw_threshold(win, rng=rng)),
                                                           rng=rng))
    for report in (fixed, drawn):
        assert report.passed, report.feedback
        assert _gain(report, "centre") < 0.02
    assert fixed.pool is not None and fixed.pool.recurring_keys > drawn.pool.recurring_keys  # type: ignore[union-attr]


def test_a_random_window_of_a_month_is_never_the_whole_month_so_rainy_days_keep_no_cue() -> None:
    """A whole record has no other window to draw distractors from: `ask` gives it options on the
    data's scale, every draw of a record's whole window keys the same count, and such windows never
    collide, so they made a quarter of the accepted items and a blind solver that remembers keys beat
    chance (quick start handler: memorization 0.32 where chance is 0.25 over six seed families). A
    random window leaves out a row where the record allows; asked for, a whole record still comes."""
    handler = SeasonalHandler(2)
    rng = np.random.default_rng(2)
    lengths = {len(take_window(handler, "2021-02", "rain", rng=rng, min_length=10).values) for _ in range(400)}
    assert max(lengths) == 27 and min(lengths) == 10  # February 2021: 28 days
    assert len(take_window(handler, "2021-02", "rain", rng=rng, start=0).values) == 28
    short = SeasonalHandler(2)
    short.frames = {"r": handler.frames["2021-02"].iloc[:10]}
    assert len(take_window(short, "r", "rain", rng=rng, min_length=10).values) == 10  # no shorter window exists
    report = _audited_counts(handler, lambda win, rng: ask(count_beyond(win, above=0.0), rng=rng), "rain", None)
    assert report.passed, report.feedback


def _asking_until_an_item(asker: Any) -> Any:
    """The red-team template's step: the median rain of a week (0 in half the weeks), asked again and
    again until an item comes, its key kept while its distractors are redrawn."""
    def make(win: Any, rng: np.random.Generator) -> dict[str, Any] | None:
        result = channel_stat(win, "median")
        for _ in range(100):
            item = asker(result, rng)
            if item is not None:
                return item
        return None
    return make


def test_asking_one_result_until_an_item_comes_gets_no_other_options_in_a_run() -> None:
    """Asked again, a result keeps its key and draws new distractors, so a template that asks until
    one draw has no option reading like the key (the rule `ask` drops items by) makes frequent values
    keys more often than distractors: a median that is 0 in half the weeks is then the key of most
    items offering it, and blind solvers answer them. The run's bound `ask` answers a result asked
    again with None: the same template then makes exactly the items of one that draws a new window."""
    handler = SeasonalHandler(0)
    module_ask = _asking_until_an_item(lambda result, rng: ask(result, rng=rng))
    assert _shortcuts(_audited_counts(handler, module_ask, "rain")) & {"memorization", "numeric_rank"}
    run_ask = functools.cache(lambda rng: bind_blocks(rng)["ask"])
    asked_again = _drawn(handler, _asking_until_an_item(lambda result, rng: run_ask(rng)(result)), "rain")
    report = audit_items(asked_again)
    assert report.passed, report.feedback
    once = _drawn(handler, lambda win, rng: run_ask(rng)(channel_stat(win, "median")), "rain")
    assert [d.items for d in asked_again] == [d.items for d in once]


class FallingHandler(RandomHandler):
    """Daily temperatures that mostly fall steadily (a long decline, then a short climb back, in
    every record): a random window's trend is "falls strongly" far more often than anything else."""

    def __init__(self, seed: int, n_records: int = 8) -> None:
        rng = np.random.default_rng(seed)
        cycle = np.concatenate([np.linspace(30, 0, 75), np.linspace(0, 30, 16)[1:]])
        days = pd.date_range("2021-01-01", periods=4 * len(cycle), freq="D", name="date")
        self.frames = {f"r{i}": pd.DataFrame({"temp": np.round(np.tile(cycle, 4) + rng.normal(0, 5, len(days)), 1)},
                                             index=days) for i in range(n_records)}


def _trend_keys(handler: RandomHandler, asking: Any, seed: int, n: int = 120) -> tuple[list[str], int]:
    """The keys of `n` trend items of random windows, each checked against the block on the window
    it shows, and the windows it took."""
    rng = np.random.default_rng(seed)
    ids, keys, tried = list(handler.frames), [], 0
    run_ask = asking(rng)
    while len(keys) < n:
        tried += 1
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "temp", rng=rng)
        item = run_ask(trend(win)) if win is not None else None
        if item is not None:
            key = item["options"][item["answer_index"]]
            assert item["series"][0]["values"] == list(win.values) and key == trend(win).value
            keys.append(key)
    return keys, tried


def test_a_run_asks_a_reasoning_blocks_keys_about_equally_often_each_computed_from_its_window() -> None:
    """Keys as often as the data makes them are a prior a blind solver learns ("falls strongly" on a
    falling channel); the run's `ask` passes over a result whose key is ahead of another it has met,
    so the template draws windows until the key that is behind comes. Every item's key is still the
    block's answer on the window it shows; the same seed gives the same items."""
    handler = FallingHandler(0)
    unbalanced, _ = _trend_keys(handler, lambda rng: functools.partial(ask, rng=rng), seed=3)
    balanced, tried = _trend_keys(handler, lambda rng: bind_blocks(rng)["ask"], seed=3)
    top = max(Counter(unbalanced).values()) / len(unbalanced)
    assert top > 0.55, Counter(unbalanced)
    counts = Counter(balanced)
    assert len(counts) == 4 and max(counts.values()) - min(counts.values()) <= len(balanced) * 0.1, counts
    assert tried < 120 * (KEY_PATIENCE + 1)
    assert _trend_keys(handler, lambda rng: bind_blocks(rng)["ask"], seed=3) == (balanced, tried)


def test_a_key_the_data_never_gives_holds_up_no_run() -> None:
    """Where the data gives one key only (every window falls steeply), a run waits for no key it
    never met (trend's other three choices): every result makes an item, as without the balance."""
    handler = FallingHandler(1)
    for frame in handler.frames.values():
        frame["temp"] = np.round(np.linspace(40, 0, len(frame)) + np.random.default_rng(2).normal(0, 0.3, len(frame)), 2)
    keys, tried = _trend_keys(handler, lambda rng: bind_blocks(rng)["ask"], seed=4, n=40)
    unbalanced, tried_unbalanced = _trend_keys(handler, lambda rng: functools.partial(ask, rng=rng), seed=4, n=40)
    assert set(keys) == {"falls strongly"} and (keys, tried) == (unbalanced, tried_unbalanced)


def test_a_result_rebuilt_on_the_same_rows_or_a_nudged_threshold_is_asked_again() -> None:
    """The cheap ways round the rule: the same rows taken again as a new window, or the same count
    under a threshold nudged so that its question reads differently. Both have a first result's key
    and rows, so both get None, while each window's first result still gets its item or not."""
    handler = SeasonalHandler(1)
    rng = np.random.default_rng(1)
    run_ask = bind_blocks(rng)["ask"]
    firsts = []
    for start in range(0, 19):
        win = take_window(handler, "2021-03", "temp", rng=rng, start=start, length=12)
        firsts.append(run_ask(channel_stat(win, "mean")))
        again = take_window(handler, "2021-03", "temp", rng=rng, start=start, length=12)
        assert run_ask(channel_stat(again, "mean")) is None
        count = count_beyond(win, above=10.0)
        firsts.append(run_ask(count))
        nudged = count_beyond(win, above=10.000001)
        assert nudged.question != count.question and nudged.value == count.value and run_ask(nudged) is None
    assert sum(item is not None for item in firsts) >= 19  # the means of other rows read apart


def test_a_drawn_threshold_is_a_value_of_the_record_and_a_written_t_stands_for_it() -> None:
    handler = RandomHandler(4, n_records=1, length=60)
    handler.frames["r0"].iloc[5:9, 0] = np.nan
    rng = np.random.default_rng(4)
    win = take_window(handler, "r0", "temp", rng=rng, start=20, length=10)
    drawn = {draw_threshold(win, rng=rng) for _ in range(300)}
    assert drawn <= set(handler.frames["r0"]["temp"].dropna()) and len(drawn) > 30
    call, quoted, named = written_calls('count_beyond(win, above=t); count_beyond(win, above="t"); first_day(win, k)')
    assert call.draws and call.arguments(drawn=2.5) == ((), {"above": 2.5})
    assert quoted.literal and not quoted.draws and quoted.arguments(drawn=2.5) == ((), {"above": "t"})
    assert not named.literal and not named.draws  # any other name: a parameter the programmer picks


def test_ask_on_a_whole_record_window_and_a_first_date_the_question_names() -> None:
    handler = RandomHandler(0, n_records=1, length=40)
    rng = np.random.default_rng(0)
    whole = take_window(handler, "r0", "temp", rng=rng, start=0)
    assert len(whole.values) == 40
    item = Item.model_validate(ask(channel_stat(whole, "mean"), rng=rng))  # no other window: the data's scale
    assert len(item.options) == 4 and item.answer in item.options
    flat = take_window(handler, "r0", "temp", rng=rng, start=0, length=20)
    below = float(flat.values[0]) - 0.05  # the first value is already above: the key would be the first date
    assert first_day(flat, above=below).value == flat.first and ask(first_day(flat, above=below), rng=rng) is None
    constant = RandomHandler(0, n_records=1, length=30)
    constant.frames["r0"]["temp"] = 5.0  # every other window has the same mean: no distractor reads differently
    assert ask(channel_stat(take_window(constant, "r0", "temp", rng=rng, length=10), "mean"), rng=rng) is None


BLOCKS_TEMPLATE = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, "temp_max")
        if win is None:
            continue
        low = align_window(handler, win, "temp_min")
        result = channel_stat(win, "mean")
        gap = compare_windows(win, low, "mean")
        if low is None or gap is None:
            continue
        key, wrong = numeric_options(result.value, spread=result.spread, decimals=result.decimals, unit=result.unit)
        text = f"What is the mean {win.about}?"
        items.append(mc_item(text, key, wrong, series=result.shown, rationale=result.rationale,
                             metadata={"record_ids": [rid]}))
    return items
'''


def test_a_template_made_of_blocks_passes_check_template_in_the_sandbox(tmp_path) -> None:
    from itemsmith.cli.app import app

    path = tmp_path / "blocks.py"
    path.write_text(BLOCKS_TEMPLATE)
    result = CliRunner().invoke(app, ["check-template", str(path), "--handler", "weather", "--samples", "4",
                                      "--json"])
    payload = json.loads(result.output)
    assert payload["status"] == "ok" and result.exit_code == 0, payload
    for item in payload["items"]:
        shown = item["series"][0]
        assert shown["name"] == "temp_max" and len(shown["values"]) == len(shown["timestamps"])
        assert item["options"][item["answer_index"]] in item["rationale"]


# --- block calls written in a text (a planner's brief) ------------------------------------------


def test_written_calls_parse_each_window_block_call_without_running_it() -> None:
    from itemsmith.items.blocks import written_calls

    (nested,) = written_calls("count_beyond(win, above=(1.5)) of precipitation, then more text (x)")
    assert nested.text == "count_beyond(win, above=(1.5))" and nested.literal and nested.kwargs == {"above": 1.5}
    (named,) = written_calls("first_day(win, above=limit)")
    assert named.on_win and not named.literal and named.error is None  # a name: the programmer's to pick
    (other,) = written_calls("change_between(window, 0, -1)")
    assert other.literal and not other.on_win  # not the skeleton's variable
    (broken,) = written_calls("count_beyond(window: 'Window', above=None) -> 'BlockResult'")
    assert broken.error is not None and "not Python" in broken.error
    (open_call,) = written_calls("channel_stat(win, 'max' of level")
    assert open_call.error is not None  # no closing parenthesis
    assert written_calls("take_window(handler, rid, 'x') and compare_windows(a, b)") == []  # not one-window blocks
    assert [c.name for c in written_calls('channel_stat(win, "max") - channel_stat(win, "min")')] == [
        "channel_stat", "channel_stat"]


# --- the numbers a question prints are the numbers counted against ------------------------------


class SixDecimals(RandomHandler):
    """Quarterly percentage changes written with six decimals (like a user's macro data)."""

    units = {"temp": "%", "rain": "%"}

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.frames = {
            f"r{i}": pd.DataFrame({"temp": np.round(rng.normal(0.7, 0.9, 80), 6),
                                   "rain": np.round(rng.normal(-0.2, 1.4, 80), 6)},
                                  index=pd.date_range("1990-01-01", periods=80, freq="QS", name="quarter"))
            for i in range(4)}


class MacroChanges(RandomHandler):
    """statsmodels' US macro data as a user's handler: quarterly percentage changes of real GDP,
    consumption and investment, six decimals, one record per decade."""

    units = {"temp": "%", "rain": "%"}

    def __init__(self, seed: int) -> None:
        del seed
        sm = pytest.importorskip("statsmodels.api")
        data = sm.datasets.macrodata.load_pandas().data
        index = pd.PeriodIndex.from_fields(year=data["year"].astype(int), quarter=data["quarter"].astype(int),
                                           freq="Q").to_timestamp()
        changes = pd.DataFrame({"temp": data["realgdp"].pct_change().to_numpy() * 100,
                                "rain": data["realinv"].pct_change().to_numpy() * 100}, index=index).round(6)
        changes.index.name = "quarter"
        self.frames = {f"{decade}s": frame.dropna() for decade, frame in
                       changes.groupby((changes.index.year // 10) * 10)}


_PRINTED = re.compile(r" (above|below) (-?\d+(?:\.\d+)?)%")


@pytest.mark.parametrize("handler_class", [SixDecimals, MacroChanges])
def test_every_count_and_first_day_is_taken_against_the_printed_threshold(handler_class: type) -> None:
    """With six-decimal data, the key of every item equals a count (or a first date) against the
    number the question prints, recomputed from the series shown: for a threshold passed with six
    decimals (a value of the record, unrounded) and for one `draw_threshold` draws. Counting against
    the unrounded value would give another key on some items (the test can fail)."""
    handler = handler_class(0)
    rng = np.random.default_rng(1)
    checked = {"count": 0, "first": 0}
    differs = 0  # items whose key, counted against the unrounded value, would be another
    for _ in range(600):
        rid = list(handler.frames)[int(rng.integers(len(handler.frames)))]
        win = take_window(handler, rid, ["temp", "rain"][int(rng.integers(2))], rng=rng, min_length=12,
                          max_length=30)
        if win is None:
            continue
        unrounded = float(win.record[int(rng.integers(len(win.record)))])
        for kind, result in (("count", count_beyond(win, above=unrounded)),
                             ("first", first_day(win, below=draw_threshold(win, rng=rng)))):
            raw = ask(result, rng=rng)
            if raw is None:
                continue
            item = Item.model_validate(raw)
            side, printed = _PRINTED.search(item.question).groups()  # type: ignore[union-attr]
            values = np.array(item.series[0].values)
            passing = values > float(printed) if side == "above" else values < float(printed)
            key = item.options[item.answer_index]
            if kind == "count":
                assert int(key) == int(passing.sum()), (item.question, key)
                differs += int(key) != int((values > unrounded).sum())
            else:
                assert key == item.series[0].timestamps[int(np.flatnonzero(passing)[0])]  # type: ignore[index]
            checked[kind] += 1
    assert min(checked.values()) >= 20 and differs > 0
