import datetime as dt
import re

import numpy as np
import pytest
from scipy.stats import chisquare

from itemsmith.items.helpers import (
    bind_helpers,
    date_options,
    mc_item,
    numeric_options,
    pz_item,
    series,
    tf_item,
)
from itemsmith.items.schema import Item


def test_mc_item_is_a_valid_item_whose_answer_is_the_correct_option():
    item = Item.model_validate(mc_item("Max?", 7, [3, 4, 5], rng=np.random.default_rng(1)))
    assert item.answer == "7"
    assert sorted(item.options) == ["3", "4", "5", "7"]


def test_mc_answer_position_is_uniform_over_seeds():
    counts = np.zeros(4)
    for seed in range(4000):
        counts[mc_item("q", "right", ["w1", "w2", "w3"], rng=np.random.default_rng(seed))["answer_index"]] += 1
    assert chisquare(counts).pvalue > 0.01
    assert counts.min() > 850


def test_mc_same_seed_same_item():
    a = mc_item("q", "r", ["x", "y"], rng=np.random.default_rng(5))
    b = mc_item("q", "r", ["x", "y"], rng=np.random.default_rng(5))
    assert a == b


@pytest.mark.parametrize("distractors", [[], ["1", "2", "3", "4", "5", "6"]])
def test_mc_distractor_count_is_checked(distractors):
    with pytest.raises(ValueError, match="distractors"):
        mc_item("q", "r", distractors, rng=np.random.default_rng(0))


def test_mc_duplicate_options_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        mc_item("q", "1", [1, "2"], rng=np.random.default_rng(0))


def test_series_takes_a_list_of_channels_and_one_channel_alone_is_a_clear_error():
    channel = series([1.0, 2.0], name="level")
    item = Item.model_validate(mc_item("q", "r", ["x"], rng=np.random.default_rng(0), series=(channel,)))
    assert [s.name for s in item.series] == ["level"]
    with pytest.raises(TypeError, match=r"series= takes a list of channels, e\.g\. series=\[series\(values"):
        mc_item("q", "r", ["x"], rng=np.random.default_rng(0), series=channel)
    with pytest.raises(TypeError, match="not a ndarray"):
        tf_item("Rising?", True, series=np.array([1.0, 2.0]))


def test_tf_item():
    assert Item.model_validate(tf_item("Rising?", True)).answer == "True"
    assert Item.model_validate(tf_item("Rising?", False)).answer == "False"


def test_pz_item_correct_option_lists_labels_in_true_order():
    rng = np.random.default_rng(3)
    segments = [[10.0, 11.0], [20.0, 21.0], [30.0, 31.0], [40.0, 41.0]]
    item = Item.model_validate(pz_item("Order the segments", [0.0, 1.0], segments, rng=rng))
    assert item.kind.value == "pz"
    by_label = {s.name: s.values for s in item.series}
    assert by_label["given"] == [0.0, 1.0]
    order = item.answer.split(" -> ")
    assert [by_label[label] for label in order] == segments
    assert len(set(item.options)) == len(item.options) == 4


def test_pz_options_capped_by_number_of_orderings():
    item = pz_item("q", [0.0], [[1.0], [2.0]], rng=np.random.default_rng(0), n_options=5)
    assert len(item["options"]) == 2


def test_bound_helpers_use_the_run_generator():
    helpers = bind_helpers(np.random.default_rng(9))
    expected = mc_item("q", "r", ["x", "y", "z"], rng=np.random.default_rng(9))
    assert helpers["mc_item"]("q", "r", ["x", "y", "z"]) == expected
    assert helpers["series"]([1, 2], name="x", unit="mV") == {"name": "x", "values": [1.0, 2.0], "unit": "mV"}
    assert series([1], timestamps=["2024-01-01"])["timestamps"] == ["2024-01-01"]


def _rank(key: str, wrong: list[str]) -> int:
    values = sorted(float(re.sub(r"[^0-9.-]", "", v)) for v in [key, *wrong])
    return values.index(float(re.sub(r"[^0-9.-]", "", key)))


@pytest.mark.parametrize("n", [3, 4, 6])
def test_numeric_options_put_the_key_at_a_uniform_rank(n: int) -> None:
    rng = np.random.default_rng(5)
    ranks = [_rank(*numeric_options(50.0, spread=2.0, n=n, decimals=1, rng=rng)) for _ in range(3000)]
    counts = np.bincount(ranks, minlength=n)
    assert chisquare(counts).pvalue > 0.001, counts


def test_numeric_options_format_every_option_alike() -> None:
    rng = np.random.default_rng(1)
    key, wrong = numeric_options(12.3456, spread=0.7, decimals=2, unit="mm", rng=rng)
    assert key == "12.35 mm" and len(wrong) == 3
    assert all(re.fullmatch(r"-?\d+\.\d\d mm", o) for o in [key, *wrong])
    assert len({key, *wrong}) == 4
    assert numeric_options(7, rng=rng)[0] == "7"  # an int key: no decimals
    percent_key, percent_wrong = numeric_options(40, unit="%", spread=5, rng=rng)
    assert percent_key == "40%" and all(o.endswith("%") and " " not in o for o in percent_wrong)


def test_numeric_options_respect_bounds_and_refuse_a_key_on_the_edge() -> None:
    rng = np.random.default_rng(2)
    for _ in range(200):
        try:
            key, wrong = numeric_options(2, spread=3, low=0, high=20, rng=rng)
        except ValueError as exc:
            assert "too close to low/high" in str(exc)
            continue
        assert all(0 <= int(o) <= 20 for o in [key, *wrong])
    refused = 0
    for _ in range(100):
        try:
            numeric_options(0, spread=1, low=0, rng=rng)
        except ValueError:
            refused += 1
    assert 60 <= refused <= 90  # the key 0 can only be the smallest: 3 ranks of 4 refused, never narrowed
    with pytest.raises(ValueError, match="outside"):
        numeric_options(30, low=0, high=20, rng=rng)
    with pytest.raises(ValueError, match="finite"):
        numeric_options(float("nan"), rng=rng)


def test_numeric_options_are_deterministic_under_the_run_seed() -> None:
    first = bind_helpers(np.random.default_rng(11))["numeric_options"](3.7, spread=0.5)
    again = bind_helpers(np.random.default_rng(11))["numeric_options"](3.7, spread=0.5)
    assert first == again


def test_date_options() -> None:
    rng = np.random.default_rng(3)
    ranks = []
    for _ in range(2000):
        try:
            key, wrong = date_options("2024-03-15", spread_days=3, low="2024-03-01", high="2024-03-31", rng=rng)
        except ValueError:
            continue
        assert key == "2024-03-15" and len(set(wrong)) == 3
        days = sorted(dt.date.fromisoformat(d) for d in [key, *wrong])
        assert days[0] >= dt.date(2024, 3, 1) and days[-1] <= dt.date(2024, 3, 31)
        ranks.append(days.index(dt.date(2024, 3, 15)))
    assert chisquare(np.bincount(ranks, minlength=4)).pvalue > 0.001
    key, wrong = date_options(dt.datetime(2024, 1, 1, 6), step=dt.timedelta(hours=1), spread_days=0.2,
                              fmt="%Y-%m-%d %H:%M", rng=rng)
    assert key == "2024-01-01 06:00" and all(re.fullmatch(r"2024-01-01 \d\d:00|2023-12-31 \d\d:00", w)
                                               for w in wrong)


def test_numeric_options_on_the_datas_steps() -> None:
    rng = np.random.default_rng(3)
    ranks = []
    for _ in range(2000):
        key, wrong = numeric_options(6.1, spread=1.0, decimals=2, low=0, step=5 / 9, rng=rng)
        assert key == "6.10"
        # every distractor is the key plus a whole, non-zero number of steps
        multiples = [(float(o) - 6.1) / (5 / 9) for o in wrong]
        assert all(abs(m - round(m)) < 0.02 and round(m) != 0 for m in multiples), wrong
        assert all(float(o) >= 0 for o in wrong)
        ranks.append(_rank(key, wrong))
    assert chisquare(np.bincount(ranks, minlength=4)).pvalue > 0.001  # the key's rank stays uniform
    with pytest.raises(ValueError, match="finer than"):
        numeric_options(5.0, spread=0.2, decimals=0, step=0.1, rng=rng)
    with pytest.raises(ValueError, match="step > 0"):
        numeric_options(5.0, step=0, rng=rng)


# --- recipe: derived= texts in the audit's vocabulary -------------------------------------------------


def test_recipe_writes_the_texts_users_read():
    from itemsmith.items.helpers import recipe

    assert recipe.rolling("temp_max", "mean", 7) == "7-day trailing rolling mean of temp_max"
    assert recipe.rolling("close", "max", 20, unit="point", centred=True) == "20-point centred rolling max of close"
    assert recipe.resample("precipitation", "MS", "sum") == "monthly total of precipitation"
    assert recipe.change("close", kind="percent") == "1-point percentage change of close"
    assert recipe.zscore("close", 30) == "30-day rolling z-score of close"
    assert recipe.log("volume", "10") == "log10 of volume"
    assert recipe.combine("temp_max", "-", "temp_min") == "temp_max - temp_min"
    assert recipe.rolling(recipe.convert("temp_max", "degF"), "mean", 7) == \
        "7-day trailing rolling mean of temp_max in degF"


@pytest.mark.parametrize("call", [
    lambda r: r.rolling("x", "average-ish", 7), lambda r: r.rolling("x", "mean", 0), lambda r: r.rolling("x", "mean", 2.5),
    lambda r: r.rolling("x", "mean", 7, unit="fortnight"), lambda r: r.resample("x", "decade", "sum"),
    lambda r: r.change("x", kind="ratio"), lambda r: r.combine("a", "%", "b"), lambda r: r.log("x", "3"),
])
def test_recipe_refuses_what_the_vocabulary_lacks(call):
    from itemsmith.items.helpers import recipe

    with pytest.raises(ValueError, match="must be|whole number"):
        call(recipe)
