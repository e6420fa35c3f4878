"""What a block records about its call (`items/block_calls.py`): the rows and arguments, as plain
JSON, checked against the window's own rows; unrecordable arguments record nothing; the record
reaches the item through `ask` and through the sandbox; a new block registers with one decorator."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

import numpy as np
import pytest

from itemsmith.items.block_calls import CALL_KEY, REPLAYABLE, BlockCall, replayable
from itemsmith.items.blocks import (
    BlockResult,
    Window,
    ask,
    change_between,
    channel_stat,
    compare_windows,
    count_beyond,
    first_day,
    take_window,
)
from itemsmith.sandbox import run_template

from .test_blocks import RandomHandler


def _window(seed: int = 0, record: str = "r1", channel: str = "temp") -> Window:
    window = take_window(RandomHandler(seed), record, channel, rng=np.random.default_rng(seed), length=30)
    assert window is not None
    return window


def test_every_block_records_its_name_rows_and_arguments_as_plain_json() -> None:
    win, other = _window(0, "r1"), _window(0, "r2")
    calls = {
        "channel_stat": channel_stat(win, "mean"),
        "count_beyond": count_beyond(win, above=np.float64(12.5)),  # a numpy scalar becomes a float
        "change_between": change_between(win, 2, -3),
        "first_day": first_day(win, below=30.0),
        "compare_windows": compare_windows(win, other, "median"),
    }
    for name, result in calls.items():
        assert result is not None and result.call is not None
        assert json.loads(json.dumps(result.call)) == result.call  # plain JSON, nothing else
        call = BlockCall.model_validate(result.call)
        assert call.block == name
        rows = call.windows["a" if name == "compare_windows" else "window"]
        assert (rows.record_id, rows.channel, rows.start, rows.end) == ("r1", "temp", win.start, win.end)
        assert (rows.first, rows.last) == (win.dates[0], win.dates[-1])
    assert calls["count_beyond"].call["args"] == {"above": 12.5}  # type: ignore[index]
    assert type(calls["count_beyond"].call["args"]["above"]) is float  # type: ignore[index]
    assert calls["change_between"].call["args"] == {"first": 2, "last": -3}  # type: ignore[index]
    assert calls["first_day"].call["args"] == {"below": 30.0}  # type: ignore[index]
    second = BlockCall.model_validate(calls["compare_windows"].call).windows["b"]
    assert (second.record_id, second.start, second.end) == ("r2", other.start, other.end)


def test_an_argument_that_is_no_json_scalar_records_no_call() -> None:
    win = _window()
    assert count_beyond(win, above=float("nan")).call is None
    assert count_beyond(win, above=np.array(12.0)).call is None  # type: ignore[arg-type]  # a 0-d array, no scalar
    named = dataclasses.replace(win, record_id=("r1", 2))  # a record id no JSON scalar
    assert channel_stat(named, "mean").call is None  # type: ignore[union-attr]


def test_ask_writes_the_call_into_the_items_metadata_and_template_metadata_cannot_hide_it() -> None:
    rng = np.random.default_rng(3)
    handler = RandomHandler(3, length=200)
    items = []
    for _ in range(200):
        win = take_window(handler, "r0", "temp", rng=rng)
        result = channel_stat(win, "mean") if win is not None else None
        item = ask(result, rng=rng, metadata={CALL_KEY: "a template's own"})
        if item is not None:
            items.append((result, item))
    assert items
    for result, item in items:
        assert item["metadata"][CALL_KEY] == result.call and item["metadata"]["record_ids"] == ["r0"]


def test_a_new_block_registers_as_replayable_with_one_decorator() -> None:
    win = _window()

    def last_value(window: Window, scale: float = 1.0) -> BlockResult:
        value = float(window.values[-1]) * scale
        return BlockResult(value=value, how="last", question=f"Last value of the {window.about}?", unit="",
                           spread=1.0, decimals=1, rationale="", shown=[dict(window.shown)], window=window)

    def highest_last(window: Window, others: Sequence[Window]) -> BlockResult:
        return last_value(max([window, *others], key=lambda w: float(w.values[-1])))

    try:
        block = replayable(last_value)
        assert REPLAYABLE["last_value"] is block
        assert block(win, scale=2).call["args"] == {"scale": 2}
        with pytest.raises(ValueError, match="already registered"):
            replayable(last_value)
        several = replayable(highest_last)(win, [_window(1, "r2"), _window(2, "r3")])
        rows = BlockCall.model_validate(several.call).windows
        assert rows["window"].record_id == "r1" and [r.record_id for r in rows["others"]] == ["r2", "r3"]
    finally:
        REPLAYABLE.pop("last_value", None)
        REPLAYABLE.pop("highest_last", None)
    with pytest.raises(TypeError, match="takes no Window"):
        replayable(lambda values: None)


TEMPLATE = '''
def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(50 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], "temp_max", min_length=7, max_length=20)
        if win is None:
            continue
        item = ask(count_beyond(win, above=draw_threshold(win)))
        if item is not None:
            items.append(item)
    return items
'''


def test_the_record_comes_back_from_the_sandbox_with_the_item() -> None:
    pytest.importorskip("vega_datasets")
    result = run_template(TEMPLATE, "weather", num_samples=3, seed=5)
    assert result.items
    for item in result.items:
        call = BlockCall.model_validate(item["metadata"][CALL_KEY])
        assert call.block == "count_beyond" and call.windows["window"].channel == "temp_max"
        assert str(call.windows["window"].record_id) in item["question"]


def test_a_block_annotated_with_the_class_itself_registers_its_windows() -> None:
    from itemsmith.items.block_calls import window_parameters

    def plain(window, other, scale: float = 1.0):  # type: ignore[no-untyped-def]
        return None

    plain.__annotations__.update({"window": Window, "other": Window})
    assert window_parameters(plain) == ["window", "other"]
    assert window_parameters(compare_windows) == ["a", "b"]  # string annotations (postponed evaluation)
