"""The reasoning blocks on synthetic series whose answer is known by construction (a planted
trend, peak, spike, shift, lag...), each also just inside its margin, where it must give None
rather than a key; their items through `ask`; a template of them in the sandbox; and the blocks
on a handler over real data (statsmodels' Mauna Loa CO2), checked against what is known of it."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from itemsmith.items.blocks import BLOCKS, RANDOM_BLOCKS, WINDOW_BLOCKS, ask, example_window, take_window
from itemsmith.items.reasoning_blocks import (
    REASONING_BLOCKS,
    TREND_CHOICES,
    USES,
    Choice,
    compare,
    correlation,
    leads,
    level_shift,
    most_alike,
    seasonal_peak,
    theil_sen,
    trend,
    unusual,
    volatility_regime,
)
from itemsmith.items.schema import Item


def window(values: Any, *, channel: str = "temp", unit: str = "°C", start: str = "2021-01-04", freq: str = "D",
           record: str = "r1") -> Any:
    """A window over `values` with dates `freq` apart from `start` (built as take_window builds one)."""
    values = np.asarray(values, dtype=float)
    index = pd.date_range(start, periods=len(values), freq=freq, name="date")
    handler = _Handler({record: pd.DataFrame({channel: values}, index=index)}, {channel: unit})
    win = take_window(handler, record, channel, rng=np.random.default_rng(0), start=0, length=len(values))
    assert win is not None
    return win


class _Handler:
    def __init__(self, frames: dict[str, pd.DataFrame], units: dict[str, str]) -> None:
        self.frames, self.units = frames, units

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": list(self.frames)})

    def series(self, record_id: Any) -> pd.DataFrame:
        return self.frames[record_id].copy()


def noise(n: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, scale, n)


# --- trend -------------------------------------------------------------------------------------


def test_theil_sen_recovers_a_planted_slope_inside_its_interval_and_ignores_outliers() -> None:
    values = 0.5 * np.arange(40) + noise(40, scale=0.2)
    values[[5, 30]] += 50  # two wild readings: a least-squares slope would move, the median of slopes not
    slope, low, high = theil_sen(values)
    assert low <= 0.5 <= high and abs(slope - 0.5) < 0.03


@pytest.mark.parametrize(("slope", "key"), [(0.5, "rises strongly"), (-0.5, "falls strongly")])
def test_a_planted_steep_trend_is_keyed_by_direction_and_strength(slope: float, key: str) -> None:
    result = trend(window(slope * np.arange(30) + noise(30)))
    assert result is not None and result.value == key and result.value in TREND_CHOICES
    assert result.category == "pattern_recognition" and result.concept == "trend"
    assert "°C" in result.question and "°C" in result.rationale


def test_a_slight_but_sure_trend_is_slightly_and_no_trend_is_skipped() -> None:
    n = 400
    values = 0.002 * np.arange(n) + noise(n, seed=3)  # 0.8 over the window against a scatter of about 1
    result = trend(window(values))
    assert result is not None and result.value == "rises slightly"
    assert trend(window(noise(n, seed=4))) is None  # the slope's interval holds 0


def test_a_trend_between_slight_and_strong_is_inside_the_margin_and_skipped() -> None:
    n = 200
    values = 2.2 / (n - 1) * np.arange(n) + noise(n, seed=5)  # change about 2.2 scatters: between 1.5 and 3
    result = trend(window(values))
    ratio = abs(theil_sen(values)[0] * (n - 1))  # the scatter is about 1
    assert 1.6 < ratio < 2.9 and result is None


# --- seasonal peak -------------------------------------------------------------------------------


def test_the_hour_of_a_planted_daily_peak_and_a_weekday_bump_are_keyed() -> None:
    hours = np.arange(24 * 14)
    values = 10 + 5 * np.exp(-((hours % 24 - 14) ** 2) / 4) + noise(len(hours), scale=0.5)
    result = seasonal_peak(window(values, freq="h"), "hour")
    assert result is not None and result.value == "14:00" and result.choices[0] == "14:00"
    days = np.arange(7 * 12)
    weekly = 5 + 4 * (pd.date_range("2021-01-04", periods=len(days)).weekday == 5) + noise(len(days), scale=0.5)
    low = seasonal_peak(window(weekly), "weekday", "max")
    assert low is not None and low.value == "Saturday"


def test_a_month_peak_over_years_and_the_trough_month() -> None:
    days = pd.date_range("2010-01-01", "2014-12-31", freq="D")
    values = 10 - 8 * np.cos(2 * np.pi * (days.dayofyear - 20) / 365.25) + noise(len(days), scale=1.0)
    peak = seasonal_peak(window(values, start="2010-01-01"), "month", "max")
    trough = seasonal_peak(window(values, start="2010-01-01"), "month", "min")
    assert peak is not None and peak.value == "July"
    assert trough is not None and trough.value == "January"


def test_no_seasonality_or_two_near_equal_groups_are_skipped() -> None:
    assert seasonal_peak(window(noise(7 * 8, seed=1) + 5), "weekday") is None
    days = pd.date_range("2021-01-04", periods=7 * 20)
    twin = 5 + 3 * np.isin(days.weekday, [2, 3]) + noise(len(days), seed=2, scale=0.3)  # Wed and Thu alike
    assert seasonal_peak(window(twin), "weekday") is None
    assert seasonal_peak(window(np.arange(30.0)), "hour") is None  # one hour only: fewer than 3 groups


# --- unusual day / stretch -----------------------------------------------------------------------


def test_a_planted_spike_is_the_most_unusual_day_and_the_question_states_the_rule() -> None:
    values = 20 + noise(30, seed=7)
    values[17] += 9
    win = window(values)
    result = unusual(win)
    assert result is not None and result.value == win.dates[17]
    assert ("Which day of the temp (°C) of record r1 from 2021-01-04 to 2021-02-02 is the most unusual: its value "
            "farthest (up or down) from the median of the 2 values just before it and the 2 just after it? The first 2 "
            "and last 2 values are left out.") == result.question
    assert not {win.dates[0], win.dates[1], win.dates[-2], win.dates[-1]} & set(result.choices)
    item = ask(result, rng=np.random.default_rng(1))
    assert item is not None and item["options"][item["answer_index"]] == win.dates[17]
    assert set(item["options"]) <= set(win.dates) and len(item["options"]) == 4


def test_two_equal_spikes_or_none_at_all_are_skipped() -> None:
    values = 20 + noise(30, seed=7)
    assert unusual(window(values)) is None
    values[[5, 20]] += 9
    assert unusual(window(values)) is None  # the runner-up lies within the margin


def test_an_unusual_stretch_is_named_by_its_dates() -> None:
    values = 5 + noise(36, seed=8, scale=0.5)
    values[12:15] += 4  # the 5th stretch of 3
    win = window(values)
    result = unusual(win, 3)
    assert result is not None and result.value == f"{win.dates[12]} to {win.dates[14]}"
    assert "cut into stretches of 3 values" in result.question and "Only stretches with 2 values on both sides" in result.question


@pytest.mark.parametrize("seed", range(12))
def test_on_a_trending_series_the_spike_is_found_and_the_end_of_the_window_is_not(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 60))
    at = int(rng.integers(n // 4, 3 * n // 4))
    values = 300 + 0.5 * np.arange(n) + noise(n, seed=seed, scale=0.3)
    values[at] += 2.5 * (1 if seed % 2 else -1)
    inner = values[1:-1]
    old = 1 + int(np.argmax(np.abs(inner - np.median(inner))))  # the rule before: farthest from the window's median
    assert min(old, n - 1 - old) <= 3 and abs(old - at) > 3  # a day near an end of the window, not the spike
    result = unusual(window(values, freq="W", channel="co2", unit="ppm"))
    assert result is not None and result.value == window(values, freq="W").dates[at]
    assert result.question.startswith("Which week of the co2 (ppm)")


def test_a_level_shift_or_a_smooth_seasonal_curve_is_no_anomaly() -> None:
    assert unusual(window(np.r_[np.full(15, 10.0), np.full(15, 14.0)] + noise(30, seed=3, scale=0.2))) is None
    assert unusual(window(10 * np.sin(np.arange(52) * 2 * np.pi / 52) + noise(52, seed=4, scale=0.3))) is None


# --- level shift ---------------------------------------------------------------------------------


def test_a_planted_level_shift_is_dated_at_its_first_new_value() -> None:
    values = np.r_[10 + noise(20, seed=9, scale=0.5), 14 + noise(20, seed=10, scale=0.5)]
    win = window(values)
    result = level_shift(win)
    assert result is not None and result.value == win.dates[20]
    assert result.concept == "structural_break" and result.category == "temporal_relation"
    ranks = set()
    for seed in range(12):
        item = ask(result, rng=np.random.default_rng(seed))
        assert item is not None and item["options"][item["answer_index"]] == win.dates[20]
        rows = sorted(win.dates.index(o) for o in item["options"])
        assert np.diff(rows).tolist() == [2, 2, 2]  # equally spaced: the key's place among them tells nothing
        ranks.add(rows.index(20))
    assert len(ranks) > 2


def test_no_shift_or_two_equal_shifts_are_skipped() -> None:
    assert level_shift(window(10 + noise(40, seed=11))) is None
    two = np.r_[10 + noise(15, seed=12, scale=0.3), 13 + noise(15, seed=13, scale=0.3), 10 + noise(15, seed=14, scale=0.3)]
    assert level_shift(window(two)) is None


# --- comparisons ---------------------------------------------------------------------------------


def test_which_of_four_channels_is_highest_most_variable_or_trends_most() -> None:
    a = window(20 + noise(30, seed=1), channel="a")
    rest = [window(10 + noise(30, seed=s), channel=name) for s, name in ((2, "b"), (3, "c"), (4, "d"))]
    higher = compare(a, rest, "higher")
    assert higher is not None and higher.value == "a" and set(higher.choices) == {"a", "b", "c", "d"}
    wide = window(10 + noise(30, seed=5, scale=3), channel="c")
    variable = compare(a, [rest[0], wide, rest[2]], "more_variable")
    assert variable is not None and variable.value == "c"
    steep = window(10 - 0.8 * np.arange(30) + noise(30, seed=6), channel="d")
    assert (found := compare(a, [rest[0], rest[1], steep], "trends_more")) is not None and found.value == "d"
    item = ask(found, rng=np.random.default_rng(0))
    assert item is not None and item["options"][item["answer_index"]] == "d" and len(item["series"]) == 4


def test_comparisons_inside_their_margin_across_units_or_of_two_windows_give_no_item() -> None:
    a = window(20 + noise(30, seed=1), channel="a")
    close = [window(20.2 + noise(30, seed=s), channel=n) for s, n in ((2, "b"), (3, "c"), (4, "d"))]
    assert compare(a, close, "higher") is None
    assert compare(a, window(20 + noise(30, seed=5, scale=1.2), channel="b"), "more_variable") is None
    assert compare(a, window(50 + noise(30, seed=2), channel="b", unit="mm"), "higher") is None
    two = compare(a, window(10 + noise(30, seed=2), channel="b"), "higher")
    assert two is not None and two.value == "a" and ask(two, rng=np.random.default_rng(0)) is None  # 2 options
    with pytest.raises(ValueError, match="how must be"):
        compare(a, close, "bigger")


@pytest.mark.parametrize(("written", "meant"), [("variance", "more_variable"), ("std", "more_variable"),
                                                ("more variable", "more_variable"), ("average", "higher"),
                                                ("Mean", "higher"), ("slope", "trends_more")])
def test_the_words_a_model_writes_for_a_comparison_compare_the_same_way(written: str, meant: str) -> None:
    a = window(20 + noise(30, seed=1), channel="a")
    rest = [window(10 + noise(30, seed=2), channel="b"), window(10 + noise(30, seed=5, scale=3), channel="c"),
            window(10 - 0.8 * np.arange(30) + noise(30, seed=6), channel="d")]
    said, exact = compare(a, rest, written), compare(a, rest, meant)
    assert exact is not None and said is not None
    assert (said.value, said.question, said.choices) == (exact.value, exact.question, exact.choices)


def test_records_are_named_by_record() -> None:
    a = window(20 + noise(30, seed=1), record="r1")
    rest = [window(10 + noise(30, seed=s), record=f"r{s}") for s in (2, 3, 4)]
    result = compare(a, rest, "higher")
    assert result is not None and result.value == "record r1" and result.other is rest[0]


# --- correlation and lead ------------------------------------------------------------------------


def _with_r(r: float, n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two series whose Pearson correlation is exactly r."""
    x, y = noise(n, seed), noise(n, seed + 1)
    x = (x - x.mean()) / x.std()
    y = y - y.mean() - (y @ x) / (x @ x) * x
    y = y / y.std()
    return x, r * x + np.sqrt(1 - r * r) * y


@pytest.mark.parametrize(("r", "key"), [(0.85, "strongly positive"), (0.4, "weakly positive"),
                                        (0.0, "no clear correlation"), (-0.4, "weakly negative"),
                                        (-0.9, "strongly negative")])
def test_correlation_bands(r: float, key: str) -> None:
    x, y = _with_r(r)
    result = correlation(window(x, channel="a"), window(y, channel="b"))
    assert result is not None and result.value == key and abs(result.statistic - r) < 1e-9


@pytest.mark.parametrize("r", [0.65, 0.55, 0.25, -0.15, -0.58])
def test_a_correlation_near_a_band_edge_is_skipped(r: float) -> None:
    x, y = _with_r(r)
    assert correlation(window(x, channel="a"), window(y, channel="b")) is None


def test_the_channel_that_moves_first_leads_and_a_same_day_pair_moves_together() -> None:
    base = np.convolve(noise(70, seed=20), np.ones(3) / 3, mode="valid")[:60]
    lagged = np.r_[noise(3, seed=21), base[:-3]] + noise(60, seed=22, scale=0.1)  # b[t] = a[t - 3]
    a, b = window(base, channel="a"), window(lagged, channel="b")
    result = leads(a, b)
    assert result is not None and result.value == "a leads b by 3 day(s)" and result.category == "causality"
    assert len(result.choices) >= 4 and len({len(c) for c in result.choices}) == 1  # lengths tell nothing
    reverse = leads(b, a)
    assert reverse is not None and reverse.value == "a leads b by 3 day(s)"
    same = leads(a, window(base + noise(60, seed=23, scale=0.1), channel="c"))
    assert same is not None and same.value == "a leads c by 0 day(s)"


def test_unrelated_channels_have_no_leader() -> None:
    assert leads(window(noise(60, seed=30), channel="a"), window(noise(60, seed=31), channel="b")) is None


# --- volatility and similarity -------------------------------------------------------------------


def test_the_most_volatile_part_and_a_calm_series_skipped() -> None:
    values = np.r_[noise(45, seed=40), noise(15, seed=42, scale=4)]
    win = window(values)
    result = volatility_regime(win)
    assert result is not None and result.value == "the fourth quarter" and "(2021-02-18 to 2021-03-04)" in result.rationale
    assert result.concept == "volatility"
    assert volatility_regime(window(noise(60, seed=43))) is None


def test_the_window_most_alike_a_reference_and_a_close_runner_up_skipped() -> None:
    shape = np.sin(np.arange(30) / 3)
    ref = window(shape + noise(30, seed=50, scale=0.1), record="ref")
    like = window(5 + 3 * shape + noise(30, seed=51, scale=0.2), record="like")  # other level and scale
    other = [window(noise(30, seed=52 + i), record=f"o{i}") for i in range(2)]
    other.append(window(noise(30, seed=55), record="o2"))
    result = most_alike(ref, [other[0], like, other[1], other[2]])
    assert result is not None and result.value == "record like" and len(result.shown) == 5
    item = ask(result, rng=np.random.default_rng(0))
    assert item is not None and set(item["metadata"]["record_ids"]) == {"ref", "like", "o0", "o1", "o2"}
    twin = window(2 * shape + noise(30, seed=60, scale=0.2), record="twin")
    assert most_alike(ref, [like, twin, other[0]]) is None


# --- the items and the registry ------------------------------------------------------------------


def test_every_reasoning_block_is_a_block_and_the_one_window_ones_can_be_written_in_a_brief() -> None:
    assert set(REASONING_BLOCKS) <= set(BLOCKS) and not set(REASONING_BLOCKS) & RANDOM_BLOCKS
    assert {"trend", "seasonal_peak", "unusual", "level_shift", "volatility_regime"} <= set(WINDOW_BLOCKS)
    assert {use.block for use in USES} == set(REASONING_BLOCKS)


def test_a_choice_makes_a_valid_item_with_its_key_category_and_concept() -> None:
    result = trend(window(0.5 * np.arange(30) + noise(30)))
    assert isinstance(result, Choice)
    keys = set()
    for seed in range(20):
        item = ask(result, rng=np.random.default_rng(seed))
        assert item is not None
        Item.model_validate(item)
        keys.add(item["answer_index"])
        assert item["options"][item["answer_index"]] == "rises strongly"
        assert item["metadata"]["category"] == "pattern_recognition" and item["metadata"]["concept"] == "trend"
    assert len(keys) > 1  # the key's position is shuffled


def test_blocks_are_pure_the_same_windows_give_the_same_answer() -> None:
    win = window(0.5 * np.arange(30) + noise(30))
    assert trend(win).rationale == trend(win).rationale  # type: ignore[union-attr]
    assert not win.values.flags.writeable


# --- a template of reasoning blocks, and real data ------------------------------------------------

REASONING_TEMPLATE = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 200 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        win = take_window(handler, rid, "temp_max")
        if win is None:
            continue
        res = compare(win, [align_window(handler, win, c) for c in ("temp_min", "wind", "precipitation")],
                      "more_variable")
        item = ask(res)
        if item is None:
            continue
        items.append(item)
    return items
'''


def test_a_template_of_reasoning_blocks_passes_check_template_in_the_sandbox(tmp_path) -> None:
    from itemsmith.cli.app import app

    path = tmp_path / "reasoning.py"
    path.write_text(REASONING_TEMPLATE)
    result = CliRunner().invoke(app, ["check-template", str(path), "--handler", "weather", "--samples", "4",
                                      "--json"])
    payload = json.loads(result.output)
    assert payload["status"] == "ok" and result.exit_code == 0, payload
    for item in payload["items"]:
        shown = {s["name"]: np.array(s["values"]) for s in item["series"]}
        assert set(shown) == {"temp_max", "temp_min", "wind", "precipitation"}
        larger = max(shown, key=lambda name: shown[name].std(ddof=1))  # recomputed from what is shown
        assert item["options"][item["answer_index"]] == larger


class Co2Handler:
    """Weekly Mauna Loa CO2 (statsmodels), one record per decade, gaps interpolated."""

    units = {"co2": "ppm"}

    def __init__(self) -> None:
        sm = pytest.importorskip("statsmodels.api")
        data = sm.datasets.co2.load_pandas().data["co2"].interpolate()
        data.index.name = "date"
        self.frames = {f"{y}s": data[str(y):str(y + 9)].to_frame() for y in (1960, 1970, 1980, 1990)}

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": list(self.frames)})

    def series(self, record_id: Any) -> pd.DataFrame:
        return self.frames[record_id].copy()


def test_on_real_co2_the_blocks_find_the_rise_the_may_peak_and_the_autumn_trough() -> None:
    handler = Co2Handler()
    rng = np.random.default_rng(0)
    troughs = []
    for rid in handler.frames:
        whole = take_window(handler, rid, "co2", rng=rng, start=0)
        assert whole is not None
        assert (found := trend(whole)) is not None and found.value == "rises strongly"
        assert "ppm" in found.question
        peak, trough = seasonal_peak(whole, "month", "max"), seasonal_peak(whole, "month", "min")
        assert peak is not None and peak.value == "May"
        if trough is not None:  # September and October are often too close to call: skipped, never keyed
            assert trough.value in ("September", "October")
            troughs.append(trough.value)
        other = take_window(handler, {"1960s": "1990s"}.get(rid, "1960s"), "co2", rng=rng, start=0, length=520)
        assert other is not None
        higher = compare(whole, other, "higher")
        assert higher is not None and higher.value == f"record {max(rid, other.record_id)}"
    assert troughs


def test_an_example_window_of_a_steady_ramp_has_no_scatter_and_no_trend_key() -> None:
    assert trend(example_window(np.linspace(0, 1, 9), channel="x")) is None


# --- the trusted replay re-derives reasoning items from the handler's rows -----------------------


def _replay_data(handler: _Handler) -> Any:
    from itemsmith.verification.audit.record_data import RecordData, RecordFrame

    records = {}
    for rid, frame in handler.frames.items():
        stamps = [stamp.strftime("%Y-%m-%dT%H:%M:%S") for stamp in frame.index]
        records[rid] = RecordFrame.of(stamps, {c: frame[c].tolist() for c in frame.columns})
    return RecordData(units=handler.units, records=records)


def test_every_reasoning_block_is_replayable_and_its_items_agree_and_a_swapped_key_disagrees() -> None:
    from itemsmith.items.block_calls import CALL_KEY, REPLAYABLE
    from itemsmith.verification.block_replay import replay_item

    assert set(REASONING_BLOCKS) <= set(REPLAYABLE)
    days = pd.date_range("2021-01-04", periods=60, freq="D", name="date")
    base = np.convolve(noise(70, seed=20), np.ones(3) / 3, mode="valid")[:60]
    frames = {}
    for i in range(4):
        spiked = 5 + noise(60, seed=40 + i)
        spiked[30] += 12
        frames[f"r{i}"] = pd.DataFrame({
            "x": base * (1 + 2 * (i == 2)) + noise(60, seed=i, scale=0.05),  # r2 the most variable
            "y": np.r_[noise(2, seed=9), base[:-2]] + noise(60, seed=30 + i, scale=0.05),  # x leads y by 2
            "s": spiked, "v": np.r_[noise(45, seed=50 + i), noise(15, seed=60 + i, scale=5)]}, index=days)
    handler = _Handler(frames, {"x": "mm", "y": "mm", "s": "mm", "v": "mm"})
    data = _replay_data(handler)
    rng = np.random.default_rng(0)

    def cut(rid: str, channel: str) -> Any:
        return take_window(handler, rid, channel, rng=rng, start=0)

    results = [unusual(cut("r0", "s")), leads(cut("r0", "x"), cut("r0", "y")),
               compare(cut("r0", "x"), [cut(f"r{i}", "x") for i in (1, 2, 3)], "more_variable"),
               volatility_regime(cut("r1", "v"))]
    for result in results:
        assert result is not None and result.call is not None, result
        item = Item.model_validate(ask(result, rng=rng))
        assert item.metadata[CALL_KEY]["block"] == result.call["block"]
        assert replay_item(item, data).outcome == "agree", result.how
        wrong = item.model_copy(update={"answer_index": (item.answer_index + 1) % len(item.options)})
        assert replay_item(wrong, data).outcome == "disagree", result.how
