"""No "now" or "today" reaches numpy or pandas from a template (`sandbox.clock`).

The reported chain: `np.datetime64(np.array(["nowx"]).astype("U3")[0])` returned the current time
(the check saw only exact `str` values; numpy got an `np.str_`), and a template keyed on it
passed `check-template` with status ok. The attacks below are written from that report's
description and generalize it: every string type numpy/pandas take, every shape, every way
the text can be changed on the way (truncation, NUL padding, case, slicing, `.str` methods),
every way a value reaches them (arguments, the object whose method is called, callbacks,
`__str__`/`__iter__`/`__getitem__` of a template's classes, lazy iterators, setitem, subscript
keys, comparisons, builtins and partials handed a numpy/pandas callable). Each one runs in this
process with the policy only (`run_template_here`); the controls are ordinary templates that must
keep working.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from itemsmith.sandbox import clock, proxies
from itemsmith.sandbox.handler_data import HandlerView
from itemsmith.sandbox.runner import run_template_here

FAILED = {"refused", "error", "rejected"}


class TinySource:
    name = "tiny"
    description = "two records"

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": ["a", "b"], "k": ["x", "y"], "v": [1.0, 2.0]})

    def series(self, record_id: object) -> pd.DataFrame:
        return pd.DataFrame({"v": np.arange(6.0)}, index=pd.date_range("2024-01-01", periods=6, freq="D"))


HELPERS = '''
import functools
import itertools
class Word(object):
    def __str__(self):
        return "now"
class Words(object):
    def __iter__(self):
        return iter(["now"])
class Seq(object):
    def __len__(self):
        return 1
    def __getitem__(self, i):
        if i > 0:
            raise IndexError(i)
        return "now"
class YieldWords(object):
    def __iter__(self):
        yield "now"
class YieldFrom(object):
    def __iter__(self):
        yield from ["today"]
class Lying(list):
    def __iter__(self):
        return iter(["2020-01-01"])
class Label(object):
    def __str__(self):
        return "label"
def store_into_array():
    a = np.zeros(1, "datetime64[s]")
    a[0] = "now"
    return a
def store_through_loc():
    s = pd.Series(pd.date_range("2020", periods=2))
    s.loc[0] = "today"
    return s
def set_index_words():
    s = pd.Series([1])
    s.index = ["now"]
    return pd.to_datetime(s.index)
def sort_in_place():
    values = [pd.DatetimeIndex(["2026-12-04"]), "now"]
    values.sort()
    return values
class Bounds(object):
    LOW = 1
    BOTH = [0 < LOW < 2, 0 < LOW + 1 < 3]
def word_for(k):
    return "today" if k > 2 else "later"
'''


def run(expression: str) -> dict:
    source = HELPERS + textwrap.dedent(f'''
        def question(n):
            value = {expression}
            return [{{"question": "Which? " + str(value), "options": ["a", "b"], "answer_index": 0}}]
        ''')
    text = run_template_here(source, handler=HandlerView(TinySource()), num_samples=1, seed=0, output_bytes=1 << 20,
                             print_bytes=4096, synth=proxies.synth_proxy())
    return json.loads(text)


CLOCK_ATTACKS = {
    # the reported chain, and the string types numpy/pandas take
    "reported_truncated_U3": 'np.datetime64(np.array(["nowx"]).astype("U3")[0])',
    "np_str_to_timestamp": 'pd.Timestamp(str(np.str_("now")))',
    "np_bytes_scalar": 'np.datetime64(np.array([b"now"])[0])',
    "bytes_array_upper": 'np.array([b"TODAY"]).astype("datetime64[D]")',
    "zero_d_unicode_array": 'np.array(np.array("now"), dtype="datetime64[s]")',
    "zero_d_object_array": 'np.array("now", dtype=object).astype("datetime64[s]")',
    "structured_field": 'np.array([("now",)], dtype=[("d", "U3")]).astype([("d", "datetime64[s]")])',
    "pandas_string_dtype": 'pd.to_datetime(pd.array(["now"], dtype="string"))',
    "categorical": 'pd.to_datetime(pd.Categorical(["today"]))',
    "dict_values_view": 'pd.to_datetime(list({"a": "now"}.values()))',
    "list_subclass_lying_iter": 'pd.to_datetime(Lying(["now"]))',
    # the text changed on the way: the check sees what the library gets
    "nul_padded_scalar": 'pd.to_datetime("now" + chr(0))',
    "nul_then_junk_array": 'np.array(["today" + chr(0) + "x"]).astype("datetime64[D]")',
    "mixed_case_numpy": 'np.datetime64("NoW")',
    "view_truncation": 'np.array(["nowxyz"]).view("U3")[0:1].astype("datetime64[s]")',
    "str_accessor_strip_lower": 'pd.to_datetime(pd.Series([" NOW "]).str.strip().str.lower())',
    "slice_of_a_word": 'pd.Timestamp("snowy"[1:4])',
    "joined_pieces": 'np.datetime64("".join(["n", "o", "w"]))',
    # entry points
    "date_range_end": 'pd.date_range(end=np.str_("now"), periods=2)',
    "period_range_end": 'pd.period_range(end="today", periods=2, freq="D")',
    "bdate_range": 'pd.bdate_range(end="today", periods=1)',
    "busday_offset": 'np.busday_offset("today", 0, roll="forward")',
    "isin": 'pd.Series(pd.date_range("2020", periods=2)).isin(["now"])',
    "searchsorted": 'pd.date_range("2020", periods=2).searchsorted("now")',
    "fillna": 'pd.Series([pd.NaT, pd.Timestamp("2020")]).fillna("now")',
    "replace": 'pd.Series(pd.date_range("2020", periods=2)).replace(pd.Timestamp("2020-01-01"), "now")',
    "clip_upper": 'pd.Series(pd.date_range("2020", periods=2)).clip(upper="today")',
    "apply_timestamp": 'pd.Series(["to" + "day"]).apply(pd.Timestamp)',
    "map_dict_then_cast": 'pd.Series(["x"]).map({"x": "now"}).astype("datetime64[ns]")',
    # operators, setitem, subscript keys
    "index_greater_than_now": 'int((pd.date_range("2020-01-01", periods=3) > "now").sum())',
    "now_less_than_series": 'int(("today" < pd.Series(pd.date_range("2020-01-01", periods=3))).sum())',
    "chained_comparison": 'int(pd.Timestamp("2020") < pd.Timestamp("2021") < np.datetime64("2020") + 0 * len("now"))'
                          ' + int(np.datetime64("2020") < pd.Timestamp("2021") <= "now")',
    "in_datetime_index": '"now" in pd.date_range("2020", periods=2)',
    "setitem_array": "store_into_array()",
    "setitem_loc": "store_through_loc()",
    "index_assignment": "set_index_words()",
    "subscript_key": 'pd.Series([1, 2], index=pd.date_range("2020", periods=2))["today"]',
    # values template code hands the library while it runs
    "vectorize_callback": 'np.vectorize(lambda x: "now", otypes=["datetime64[s]"])(np.arange(1))',
    "where_callable_other": 'pd.Series(pd.date_range("2020", periods=2)).where(lambda s: s < pd.Timestamp("2000"), '
                            'lambda s: "now")',
    "transform_callback": 'pd.Series(pd.date_range("2020", periods=2)).transform(lambda s: "now")',
    "apply_then_cast": 'pd.Series([1]).apply(lambda x: "now").astype("datetime64[ns]")',
    "user_str": 'np.array([Word()]).astype("U").astype("datetime64[s]")',
    "user_getitem_sequence": 'np.array(Seq(), dtype="datetime64[s]")',
    "user_iter_with_yield": 'pd.Series(YieldWords(), dtype="datetime64[ns]")',
    "user_iter_with_yield_from": 'pd.Series(YieldFrom(), dtype="datetime64[ns]")',
    "user_iter_returning_iter": 'pd.Series(Words(), dtype="datetime64[ns]")',
    "genexp": 'pd.Series((w for w in ["now"]), dtype="datetime64[ns]")',
    "map_of_builtin_format": 'pd.Series(map("no{}".format, ["w"]), dtype="datetime64[ns]")',
    "zip_into_frame": 'pd.DataFrame(zip(["now"], [1]), columns=["d", "v"]).astype({"d": "datetime64[ns]"})',
    "iterator_nested_in_dict": 'pd.DataFrame({"d": iter(["now"])}, dtype="datetime64[ns]")',
    # builtins and partials that call numpy/pandas themselves
    "map_numpy_type": 'list(map(np.datetime64, ["now"]))',
    "map_over_map_join": 'list(map(np.datetime64, map("".join, [["n", "o", "w"]])))',
    "sorted_key_timestamp": 'sorted(["now", "today"], key=pd.Timestamp)',
    "partial_called_later": 'functools.partial(pd.Timestamp)("today")',
    "partial_holding_word": 'functools.partial(pd.Timestamp, "today")()',
    "partial_of_partial": 'functools.partial(functools.partial(np.datetime64), "now")()',
    "reduce_calling_numpy": 'functools.reduce(lambda a, b: np.datetime64(b), ["2020", "now"])',
    # builtins that order values make a datetime index compare itself with the string
    "sorted_index_and_word": 'sorted([pd.DatetimeIndex(["2026-12-04"]), "now"])',
    "max_index_and_word": 'max(pd.DatetimeIndex(["2026-12-04"]), "now")',
    "max_index_and_word_list": 'max(pd.DatetimeIndex(["2026-12-04"]), ["now"])',
    "sorted_nested_lists": 'sorted([[pd.DatetimeIndex(["2026-12-04"])], ["now"]])',
    "sorted_generator": 'sorted(x for x in [pd.DatetimeIndex(["2026-12-04"]), "now"])',
    "list_sort_in_place": "sort_in_place()",
    "statistics_median": 'statistics.median([pd.DatetimeIndex(["2026-12-04"]), "now", pd.DatetimeIndex(["2026-12-05"])])',
    "accumulate_max": 'list(itertools.accumulate([pd.DatetimeIndex(["2026-12-04"]), "now"], max))',
    "reduce_max": 'functools.reduce(max, [pd.DatetimeIndex(["2026-12-04"]), "today"])',
    "map_max": 'list(map(max, [pd.DatetimeIndex(["2026-12-04"])], ["now"]))',
}


@pytest.mark.parametrize("name", sorted(CLOCK_ATTACKS))
def test_the_clock_is_unreachable(name: str) -> None:
    result = run(CLOCK_ATTACKS[name])
    assert result["status"] in FAILED, result
    assert "read the clock" in result["error"] or "iterator inside a container" in result["error"], result


CONTROLS = {
    "dates_and_gaps": ('str(pd.date_range("2024-01-01", periods=3)[0]) + " " + '
                       'str(np.datetime64("2024-02-01") - np.datetime64("2024-01-01"))', "2024-01-01 00:00:00 31 days"),
    "compare_with_a_date_string": ('int((pd.date_range("2024-01-01", periods=5) > "2024-01-02").sum())', "3"),
    "compare_handler_index": ('int((handler.series("a").index < pd.Timestamp("2024-01-03")).sum())', "2"),
    "chains_short_circuit": ("int(0 <= 3 < 5) + int(1 < 2 < 1) + int(1 > 2 > (1 / 0))", "1"),
    "chains_in_class_bodies_and_comprehensions": ("[Bounds.BOTH, [i for i in range(9) if 2 <= i < 5 and i % 2 == 0 < 1]]",
                                                  "[[True, True], [2, 4]]"),
    "words_in_lists": ('int("a" in ["a", "b"]) + int("now" in ["now", "later"]) + int(None is None)', "3"),
    "words_that_are_not_the_clock": ('", ".join(pd.Series(["rain", "nowhere", "today\'s max", "snow"]).str.upper())',
                                     "RAIN, NOWHERE, TODAY'S MAX, SNOW"),
    "callbacks_returning_text": ('"|".join(pd.Series([1, 2]).apply(lambda x: "v" + str(x)).tolist())', "v1|v2"),
    "generator_into_series": ("pd.Series((x * 2 for x in range(3))).tolist()", "[0, 2, 4]"),
    "own_generator_of_words": ('" ".join(w for w in YieldWords()) + str(list(YieldFrom()))', "now['today']"),
    "zip_into_frame": ('pd.DataFrame(zip([1, 2], ["a", "b"]), columns=["v", "k"]).shape', "(2, 2)"),
    "own_str_into_numpy": ('np.array([Label()]).astype("U").tolist()', "['label']"),
    "builtins_with_numpy_callables": ('str(sorted([3, -1, 2], key=np.abs)) + str(list(map(float, np.arange(2))))',
                                      "[-1, 2, 3][0.0, 1.0]"),
    "a_function_returning_today_outside_numpy": ("word_for(3)", "today"),
    "groupby_apply": ('pd.DataFrame({"k": ["a", "b", "a"], "v": [1, 2, 3]}).groupby("k")["v"].apply('
                      'lambda s: s.sum()).tolist()', "[4, 2]"),
    "vectorize": ("np.vectorize(lambda x: x + 1)(np.arange(3)).tolist()", "[1, 2, 3]"),
    "strings_in_text": ('["it is now", "today is"]', "['it is now', 'today is']"),
    "ordering_plain_values": ('sorted([3, 1, 2]) + [max(1, 2), min([4, 5])] + sorted(["b", "a"]) + [max("now", "x")]',
                              "[1, 2, 3, 2, 4, 'a', 'b', 'x']"),
    "ordering_dates": ('str(max(pd.Timestamp("2026-12-04"), pd.Timestamp("2026-12-05")))[:11] + '
                       'str(sorted(handler.series("a").index.tolist())[0])[:10]', "2026-12-05 2024-01-01"),
}


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_ordinary_templates_still_run(name: str) -> None:
    expression, expected = CONTROLS[name]
    result = run(expression)
    assert result["status"] == "ok", result
    assert result["items"][0]["question"] == "Which? " + expected


@pytest.mark.parametrize("value", [
    "now", "NOW", " Today\t", "now\x00", "today\x00junk", np.str_("now"), np.bytes_(b"now"), b"TODAY", bytearray(b"now"),
    np.array("now"), np.array([["x", "now"]]), np.array([b"today"]), np.array(["now"], dtype=object),
    np.array([("now", 1)], dtype=[("d", "U3"), ("k", "i8")]), pd.array(["now"], dtype="string"),
    pd.Categorical(["today"]), pd.Series([1], index=["now"]), pd.DataFrame({"d": ["x", "now"]}),
    pd.Index(["now"]), pd.MultiIndex.from_tuples([("a", "now")]), [[("x", {"k": ["now"]})]], {"now": 1},
    {"k": frozenset({"today"})}, np.array(["now"]).flat,
])
def test_find_sees_the_clock_in_every_form(value: object) -> None:
    assert clock.find(value) == clock.CLOCK


@pytest.mark.parametrize("value", [
    "nowhere", "snow", "now please", "to day", "tomorrow", "n\x00ow", b"know", np.array(["nowadays", "todays"]),
    np.array([b"no", b"w"]), np.arange(5), pd.date_range("2024", periods=3), pd.Series(["a", "b"]), 1, None,
    np.array([], dtype="U5"), pd.DataFrame({"v": [1.0]}), [["a"], ("b",)],
])
def test_find_leaves_other_text_alone(value: object) -> None:
    assert clock.find(value) is None


def test_iterators_inside_containers_are_reported_as_lazy() -> None:
    assert clock.find([iter(["x"])]) == clock.LAZY
    assert clock.find({"k": (x for x in "ab")}) == clock.LAZY
    assert clock.find(np.arange(3).flat) is None  # numpy's own iterator over an array: its array is checked


KEYED_ON_THE_CLOCK = {
    "reported_chain": '''
def question(num_samples):
    when = np.datetime64(np.array(["nowx"]).astype("U3")[0])
    day = int(str(when)[8:10])
    items = []
    for _ in range(num_samples):
        k = int(rng.integers(1, 1000))
        items.append(tf_item(f"Is {k} + {day} an even number?", (k + day) % 2 == 0))
    return items
''',
    "comparison": '''
def question(num_samples):
    items = []
    for _ in range(num_samples):
        start = int(rng.integers(0, 60))
        days = pd.date_range("2026-11-01", periods=60, freq="D")[start:]
        future = int((days > "now").sum())
        items.append(tf_item(f"From day {start}, are more than 10 of these days still to come?", future > 10))
    return items
''',
}


@pytest.mark.parametrize("name", sorted(KEYED_ON_THE_CLOCK))
def test_check_template_fails_a_template_keyed_on_the_clock(tmp_path: Path, name: str) -> None:
    """Through the command line and the real sandbox pool. Control: the same template with a fixed
    date in place of the clock passes, so the failure is the clock's."""
    from itemsmith.cli.app import app

    runner = CliRunner(env={"COLUMNS": "400"})
    keyed, fixed = tmp_path / "keyed.py", tmp_path / "fixed.py"
    source = KEYED_ON_THE_CLOCK[name]
    keyed.write_text(source)
    fixed.write_text(source.replace('np.array(["nowx"]).astype("U3")[0]', '"2026-12-03"').replace('> "now"',
                                                                                                  '> "2026-12-03"'))
    outcomes = {}
    for label, path in (("keyed", keyed), ("fixed", fixed)):
        result = runner.invoke(app, ["check-template", str(path), "--handler", "synthetic", "--samples", "3", "--json"])
        outcomes[label] = (result.exit_code, json.loads(result.output))
    code, payload = outcomes["keyed"]
    assert code == 1 and payload["status"] == "error" and "read the clock" in payload["error"], payload
    code, payload = outcomes["fixed"]
    assert code == 0 and payload["status"] == "ok", payload
