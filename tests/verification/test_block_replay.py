"""The trusted replay of block items (`verification/block_replay.py`), red-teamed.

Templates run in the sandbox over a user's handler (quarterly changes with six decimals, in %);
the handler's data is read back by the trusted fetch template, as the re-derivation stage reads it.
A correct block template agrees item by item; each way a template might make a wrong key pass
(a key swapped after the call, an edited question, a forged or re-pointed record, a window with
forged values, an unknown block, rows or arguments out of range, an extra option that reads like
the key) is either a disagreement or no replay at all, never an agreement."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from itemsmith.items.block_calls import CALL_KEY, REPLAYABLE, call_metadata, replayable
from itemsmith.items.blocks import Window, ask, count_beyond, draw_threshold, take_window
from itemsmith.items.helpers import mc_item
from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.verification.audit.record_data import RecordData, RecordFrame, fetch_record_data
from itemsmith.verification.block_replay import (
    REPLAY_SOLVER,
    Replayed,
    block_record_ids,
    replay_block_items,
    replay_item,
    replay_verdict,
)

HANDLER = '''
import numpy as np
import pandas as pd


class Changes:
    name = "changes"
    description = "quarterly percentage changes of three made-up economies"
    units = {"change": "%", "level": "index"}

    def records(self):
        return pd.DataFrame({"record_id": ["north", "south", "east"]})

    def series(self, record_id):
        rng = np.random.default_rng(["north", "south", "east"].index(record_id))
        index = pd.date_range("1990-01-01", periods=80, freq="QS", name="quarter")
        change = np.round(rng.normal(0.7, 0.9, 80), 6)
        return pd.DataFrame({"change": change, "level": np.round(100 + np.cumsum(change), 6)}, index=index)
'''

# a correct block template; EDIT is replaced by each variant's change to the item (or its window)
TEMPLATE = '''
def edit(item, win, ids):
    EDIT
    return item


def question(num_samples):
    ids = list(handler.records()["record_id"])
    items = []
    for _ in range(60 * num_samples):
        if len(items) >= num_samples:
            break
        win = take_window(handler, ids[int(rng.integers(len(ids)))], CHANNEL, min_length=12, max_length=30)
        if win is None:
            continue
        item = ask(BLOCK)
        if item is not None:
            items.append(edit(item, win, ids))
    return items
'''
COUNT = "count_beyond(win, above=draw_threshold(win))"


def template(edit: str = "pass", block: str = COUNT, channel: str = "change") -> str:
    return TEMPLATE.replace("EDIT", edit).replace("BLOCK", block).replace("CHANNEL", repr(channel))


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxPool]:
    folder = tmp_path_factory.mktemp("changes")
    path = Path(folder) / "changes.py"
    path.write_text(HANDLER)
    pool = SandboxPool(str(path))
    yield pool
    pool.close()


def _replayed(pool: SandboxPool, source: str, seed: int = 3, n: int = 12) -> tuple[list[Item], list[Replayed]]:
    result = pool.run(source, num_samples=n, seed=seed)
    assert result.status is RunStatus.ok, result.error
    items = [Item.model_validate(raw) for raw in result.items]
    assert len(items) == n
    data = fetch_record_data(lambda text: pool.run(text, num_samples=1, seed=0), block_record_ids(items))
    assert data.error is None
    return items, replay_block_items(items, data)


def _verdict(items: list[Item], replayed: list[Replayed]) -> str | None:
    report = replay_verdict([(0, item) for item in items], replayed)
    return None if report is None else report.status


@pytest.mark.parametrize("block", [COUNT, "count_beyond(win, below=0.5)", "channel_stat(win, 'mean')",
                                   "channel_stat(win, 'max')", "change_between(win, 1, -2)",
                                   "first_day(win, above=draw_threshold(win))",
                                   "compare_windows(win, align_window(handler, win, 'level'), 'median')"])
def test_a_correct_block_template_agrees_on_every_item(pool: SandboxPool, block: str) -> None:
    items, replayed = _replayed(pool, template(block=block))
    assert [r.outcome for r in replayed] == ["agree"] * len(items), [r.reason for r in replayed]
    report = replay_verdict([(7, item) for item in items], replayed, seeds=[7], sizes=[len(items)])
    assert report is not None and report.status == "agrees" and report.replayed
    assert report.solver == REPLAY_SOLVER and report.agree == len(items) and report.programs == 0


def test_the_replay_recomputes_with_the_handlers_values_not_the_records() -> None:
    """Independent of the blocks' own tests: a count recomputed here by a plain loop over the
    handler's rows equals the value the replay fits to the key."""
    frame = RecordFrame.of([f"2000-01-0{d}T00:00:00" for d in range(1, 10)], {"x": [1.5, 2.0, 0.25, 3.0, 2.5,
                                                                                     0.5, 4.0, 1.0, 2.0]})
    data = RecordData(units={}, records={"a": frame})
    rows = {"record_id": "a", "channel": "x", "start": 1, "end": 8, "first": "2000-01-02", "last": "2000-01-08"}
    shown = {"name": "x", "values": [2.0, 0.25, 3.0, 2.5, 0.5, 4.0, 1.0],
             "timestamps": [f"2000-01-0{d}" for d in range(2, 9)]}
    question = "How many values of the x of record a from 2000-01-02 to 2000-01-08 are above 1.2?"
    truth = sum(v > 1.2 for v in shown["values"])  # 4
    item = Item(question=question, options=["2", "3", str(truth), "6"], answer_index=2, series=[shown],
                metadata={CALL_KEY: {"block": "count_beyond", "windows": {"window": rows}, "args": {"above": 1.2}}})
    assert replay_item(item, data) == Replayed(outcome="agree", value=float(truth), fits=[2])
    wrong = item.model_copy(update={"answer_index": 1})
    assert replay_item(wrong, data).outcome == "disagree"
    alike = item.model_copy(update={"options": ["2", "4.0", str(truth), "6"]})  # two options say 4
    assert replay_item(alike, data).outcome == "ambiguous"
    lying = item.model_copy(update={"metadata": {CALL_KEY: {**item.metadata[CALL_KEY], "value": truth}}})
    assert replay_item(lying, data).outcome == "unverifiable"  # a record holds a call, never a result


# --- red team: each way to make a wrong key pass ------------------------------------------------

SWAPPED = 'item["answer_index"] = (item["answer_index"] + 1) % len(item["options"])'
RETOLD = 'item["question"] = item["question"].replace(" above ", " at or above ")'
SHIFTED = ('item["series"][0]["values"] = item["series"][0]["values"][1:] + item["series"][0]["values"][:1]')
CONTEXT = 'item["context"] = "Count the values below the threshold instead."'
UNKNOWN = 'item["metadata"]["block_call"]["block"] = "count_beyond_exactly"'
FORGED_RESULT = 'item["metadata"]["block_call"]["value"] = 3'
FAR_ROWS = 'item["metadata"]["block_call"]["windows"]["window"]["end"] = 10 ** 6'
BAD_ARGS = 'item["metadata"]["block_call"]["args"] = {"above": 0.5, "below": 0.5}'
WRONG_ARG_NAME = 'item["metadata"]["block_call"]["args"] = {"threshold": 0.5}'
# the record points at the same rows of another record (same dates, other values)
OTHER_RECORD = ('rows = item["metadata"]["block_call"]["windows"]["window"]\n'
                '    rows["record_id"] = [r for r in ids if r != rows["record_id"]][0]')
# the question and series of one block result, the key of another (a count on other rows)
OTHER_KEY = ('other = take_window(handler, win.record_id, win.channel, start=0, length=len(win.values))\n'
             '    result = count_beyond(other, above=float(numbers_of(item["question"])))\n'
             '    key = str(result.value)\n'
             '    if key in item["options"]:\n'
             '        item["answer_index"] = item["options"].index(key)')
NUMBERS = ('\n\ndef numbers_of(text):\n'
           '    return text.split(" above ")[1].split("%")[0]\n')


def test_a_key_swapped_after_the_call_disagrees_and_rejects(pool: SandboxPool) -> None:
    items, replayed = _replayed(pool, template(SWAPPED))
    assert {r.outcome for r in replayed} == {"disagree"}
    report = replay_verdict([(0, item) for item in items], replayed)
    assert report is not None and report.status == "disagrees" and report.rejects and report.examples


@pytest.mark.parametrize("edit", [RETOLD, SHIFTED, CONTEXT, UNKNOWN, FORGED_RESULT, FAR_ROWS, BAD_ARGS,
                                  WRONG_ARG_NAME, OTHER_RECORD],
                         ids=["question-edited", "series-shifted", "context-added", "unknown-block", "forged-result",
                              "rows-out-of-range", "bad-arguments", "unknown-argument", "other-record"])
def test_an_item_the_block_did_not_write_is_not_replayed(pool: SandboxPool, edit: str) -> None:
    items, replayed = _replayed(pool, template(edit))
    assert {r.outcome for r in replayed} == {"unverifiable"}, [(r.outcome, r.reason) for r in replayed]
    assert _verdict(items, replayed) is None  # the solver model decides, as for free code


def _in_process_handler() -> object:
    namespace: dict[str, object] = {}
    exec(compile(HANDLER, "<handler>", "exec"), namespace)
    return namespace["Changes"]()  # type: ignore[operator]


def _record_data(handler: object) -> RecordData:
    """The handler's records as the fetch template sends them (ISO seconds, repr of floats)."""
    records = {}
    for rid in ("north", "south", "east"):
        frame = handler.series(rid)  # type: ignore[attr-defined]
        stamps = [stamp.strftime("%Y-%m-%dT%H:%M:%S") for stamp in frame.index]
        records[rid] = RecordFrame.of(stamps, {c: frame[c].tolist() for c in frame.columns})
    return RecordData(units=handler.units, records=records)  # type: ignore[attr-defined]


def test_a_window_with_forged_values_is_caught_on_the_handlers_rows() -> None:
    """A window whose values are not the handler's (the sandbox hides the means to build one; the
    replay must not rely on that): the item shows the real rows and the block's question, its key
    counts other values, and the replay counts the handler's."""
    handler = _in_process_handler()
    rng = np.random.default_rng(0)
    items = []
    for _ in range(400):
        win = take_window(handler, "north", "change", rng=rng, min_length=12, max_length=30)
        fake = dataclasses.replace(win, values=win.values + 0.3)
        raw = ask(count_beyond(fake, above=draw_threshold(win, rng=rng)), rng=rng)
        if raw is not None:
            items.append(Item.model_validate(raw))
        if len(items) == 20:
            break
    replayed = replay_block_items(items, _record_data(handler))
    assert "disagree" in [r.outcome for r in replayed] and "unverifiable" not in [r.outcome for r in replayed]
    assert _verdict(items, replayed) == "disagrees"


def test_the_key_of_another_window_under_the_blocks_question_disagrees(pool: SandboxPool) -> None:
    items, replayed = _replayed(pool, template(OTHER_KEY) + NUMBERS, n=20)
    assert "disagree" in [r.outcome for r in replayed]
    assert _verdict(items, replayed) == "disagrees"


def test_items_without_records_go_to_the_model_and_mixed_verdicts() -> None:
    plain = Item(question="q?", options=["a", "b"], answer_index=0)
    absent = Replayed(outcome="absent")
    assert replay_block_items([plain], RecordData()) == [Replayed(outcome="absent", reason="it records no block call")]
    assert replay_verdict([(0, plain)], [absent]) is None
    agree, disagree = Replayed(outcome="agree", value=1.0, fits=[0]), Replayed(outcome="disagree", value=2.0)
    assert replay_verdict([(0, plain), (0, plain)], [agree, absent]) is None  # not every item replayed
    report = replay_verdict([(0, plain), (0, plain), (1, plain)], [agree, absent, disagree])
    assert report is not None and report.status == "disagrees" and report.failed == 1
    assert [e.index for e in report.examples] == [0] and report.examples[0].seed == 1
    assert replay_verdict([], []) is None
    failed_fetch = replay_block_items([plain], RecordData(error="the sandbox failed"))
    assert failed_fetch[0].outcome == "absent"


# --- the red-team block templates of benchmarks/block_templates ---------------------------------

BLOCK_TEMPLATES = Path(__file__).resolve().parents[2] / "benchmarks" / "block_templates"
# the verdict the replay gives each (None: not replayed, the solver model decides)
EXPECTED = {"good_macro_count_above": "agrees", "good_macro_first_below": "agrees",
            "flawed_macro_key_next_quarter": "disagrees", "flawed_weather_median_as_mean": "disagrees",
            "flawed_weather_swapped_when_wet": "disagrees", "flawed_weather_threshold_reworded": None}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_red_team_block_templates_get_their_verdicts(name: str) -> None:
    if "_macro_" in name:
        pytest.importorskip("statsmodels")
        handler = str(BLOCK_TEMPLATES / "macro_handler.py")
    else:
        pytest.importorskip("vega_datasets")
        handler = "weather"
    with SandboxPool(handler) as pool:
        items, replayed = _replayed(pool, (BLOCK_TEMPLATES / f"{name}.py").read_text(), n=30)
    assert _verdict(items, replayed) == EXPECTED[name], [(r.outcome, r.reason) for r in replayed][:3]


def test_a_block_over_several_windows_with_its_own_result_type_is_replayed() -> None:
    """A new block registered with `replayable`: a list of windows and a result class of its own
    (a label key), replayed as the built-in blocks are."""

    @dataclasses.dataclass(frozen=True)
    class Label:
        value: str
        question: str
        shown: list[dict[str, object]]
        call: dict[str, object] | None = None

    def highest_mean(window: Window, others: Sequence[Window]) -> Label:
        best = max([window, *others], key=lambda w: float(w.values.mean()))
        return Label(value=str(best.record_id), question="Which record has the highest mean change?",
                     shown=[dict(w.shown) for w in (window, *others)])

    handler = _in_process_handler()
    rng = np.random.default_rng(4)
    wins = [take_window(handler, rid, "change", rng=rng, start=10, length=20) for rid in ("north", "south", "east")]
    try:
        result = replayable(highest_mean)(wins[0], wins[1:])
        item = Item.model_validate(mc_item(result.question, result.value,
                                           [r for r in ("north", "south", "east") if r != result.value] + ["west"],
                                           rng=rng, series=result.shown, metadata=call_metadata(result)))
        data = _record_data(handler)
        assert replay_item(item, data).outcome == "agree"
        wrong = item.model_copy(update={"answer_index": (item.answer_index + 1) % 4})
        assert replay_item(wrong, data).outcome == "disagree"
    finally:
        REPLAYABLE.pop("highest_mean", None)
