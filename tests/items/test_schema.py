import math

import pytest
from pydantic import ValidationError

from itemsmith.items.schema import Item, ItemKind, Series, Template, content_hash


def _item(**overrides):
    data = {"question": "Which way does the series trend?", "options": ["up", "down", "flat"], "answer_index": 0}
    data.update(overrides)
    return data


def _error(data) -> str:
    with pytest.raises(ValidationError) as info:
        Item.model_validate(data)
    return str(info.value)


def test_answer_text_and_answer_index_normalize_to_the_same_item():
    by_index = Item.model_validate(_item(answer_index=1))
    by_text = Item.model_validate({k: v for k, v in _item(answer="down").items() if k != "answer_index"})
    assert by_index == by_text
    assert by_text.answer == "down" and by_text.answer_letter == "B"


def test_answer_not_among_options_is_named():
    msg = _error({"question": "q?", "options": ["a", "b"], "answer": "c"})
    assert "'c' is not one of the options" in msg


def test_answer_and_index_that_disagree_are_rejected():
    assert "disagree" in _error(_item(answer="flat", answer_index=0))


def test_missing_answer_is_rejected():
    assert "neither 'answer_index' nor 'answer'" in _error({"question": "q?", "options": ["a", "b"]})


@pytest.mark.parametrize("index", [-1, 3, 10])
def test_answer_index_out_of_range(index):
    assert f"answer_index {index} is out of range for 3 options" in _error(_item(answer_index=index))


def test_duplicate_options_are_named_even_with_case_and_spacing_differences():
    msg = _error(_item(options=["Up", "down", " up"], answer_index=0))
    assert "duplicate options" in msg


def test_fewer_than_two_options():
    assert "at least 2 options" in _error(_item(options=["only"], answer_index=0))


def test_more_than_six_options():
    assert "at most 6 options" in _error(_item(options=list("abcdefg"), answer_index=0))


def test_empty_question_and_empty_option():
    assert "question is empty" in _error(_item(question="   "))
    assert "an option is empty" in _error(_item(options=["a", " "], answer_index=0))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_series_values_are_rejected_with_position(bad):
    msg = _error(_item(series=[{"name": "x", "values": [1.0, 2.0, bad]}]))
    assert "non-finite" in msg and "position 2" in msg


def test_timestamps_must_match_values():
    with pytest.raises(ValidationError, match="3 values but 2 timestamps"):
        Series(name="x", values=[1, 2, 3], timestamps=["a", "b"])


def test_series_given_as_mapping_of_channels():
    item = Item.model_validate(_item(series={"hr": {"values": [60, 61], "unit": "bpm"}, "spo2": [97, 98]}))
    assert [s.name for s in item.series] == ["hr", "spo2"]
    assert item.series[0].unit == "bpm"


def test_true_false_items_have_two_options():
    assert "exactly 2 options" in _error(_item(kind="tf"))
    assert Item.model_validate(_item(kind="tf", options=["True", "False"])).kind is ItemKind.tf


def test_unknown_fields_are_rejected():
    assert "extra" in _error(_item(explanation="x")).lower()


def test_non_dict_item_is_rejected():
    assert "must be a dict" in _error(["q", ["a", "b"], 0])


def test_template_content_hash_ignores_line_ending_style():
    unix = "def question(n):\n    return []\n"
    tpl = Template(id="t", source=unix, title="t", category="pattern")
    assert tpl.content_hash == content_hash(unix.replace("\n", "\r\n"))
    assert len(tpl.content_hash) == 64
