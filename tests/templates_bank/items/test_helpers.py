import numpy as np
import pytest
from scipy.stats import chisquare

from itemsmith.templates_bank.items.helpers import bind_helpers, mc_item, pz_item, series, tf_item
from itemsmith.templates_bank.items.schema import Item


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
