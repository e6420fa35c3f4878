"""The policy layer alone stops policy escapes.

Every attack here runs **in this process with no OS isolation** (`run_template_here`, the
same code path as the sandbox child minus the hardening), so a pass proves the policy layer
by itself refuses the escape. The payloads are harmless on purpose: if one got through it
would only copy this process's canary secret (an environment variable) into its items, which
the tests look for. The same attacks run through the isolated pool in test_attacks.py.
"""

from __future__ import annotations

import collections
import json
import os
import textwrap

import numpy as np
import pandas as pd
import pytest

from itemsmith.sandbox import dispatch, policy, proxies
from itemsmith.sandbox.handler_data import HandlerView
from itemsmith.sandbox.runner import run_template_here

CANARY = "policy-escape-canary-7f3e"
os.environ["ITEMSMITH_POLICY_CANARY"] = CANARY
FAILED = {"refused", "error", "rejected"}

# What an attacker does once they hold the real builtins: read the service's environment.
PAYLOAD = '''
def leak(builtins_dict):
    os_module = builtins_dict["__import__"]("os")
    return [{"question": os_module.environ["ITEMSMITH_POLICY_CANARY"], "options": ["a", "b"], "answer_index": 0}]
'''


class TinySource:
    name = "tiny"
    description = "two records"

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": ["a", "b"], "k": ["x", "y"], "v": [1.0, 2.0]})

    def series(self, record_id: object) -> pd.DataFrame:
        return pd.DataFrame({"v": np.arange(6.0)}, index=pd.date_range("2024-01-01", periods=6, freq="D"))


def run_policy_only(source: str, handler: object | None = None) -> dict:
    text = run_template_here(textwrap.dedent(source), handler=HandlerView(handler or TinySource()), num_samples=1,
                             seed=0, output_bytes=1 << 20, print_bytes=4096, synth=proxies.synth_proxy())
    return json.loads(text)


def assert_stopped(result: dict) -> None:
    assert result["status"] in FAILED, result
    assert CANARY not in json.dumps(result), "the policy let a template read the service's environment"


# --- reported escape chains, and variations on them --------------------------------------------

AGG_UFUNC_CHAIN = '''
def question(n):
    bound = pd.Series([1.0]).agg(np.array(["__getattribute__"]), 0, "__array_ufunc__")
    ufunc_hook = list(bound)[0]
    out = np.empty(1, dtype=object)
    getattribute = ufunc_hook(object, "__getattribute__", object, "__getattribute__", out=out)
    return [{"question": str(getattribute), "options": ["a", "b"], "answer_index": 0}]
'''


def test_chain_agg_array_of_names_to_array_ufunc() -> None:
    assert_stopped(run_policy_only(AGG_UFUNC_CHAIN))


def test_chain_first_step_alone_is_refused() -> None:
    result = run_policy_only('''
        def question(n):
            s = pd.Series([1.0]).agg(np.array(["__getattribute__"]), 0, "__array_ufunc__")
            return [{"question": "x", "options": ["a", "b"], "answer_index": 0, "metadata": {"s": str(s)}}]
        ''')
    assert_stopped(result)
    assert "function spec" in result["error"]


def test_apply_plot_backend_imports_nothing() -> None:
    result = run_policy_only('''
        def question(n):
            pd.Series([1.0]).apply(np.array(["plot"]), backend="os")
            return []
        ''')
    assert_stopped(result)


# Every container type that used to slip past the str/list/tuple/dict check, each in every
# position the name can be given in.
NAME_CONTAINERS = {
    "ndarray": 'np.array(["__getattribute__"])',
    "deque": 'collections.deque(["__getattribute__"])',
    "index": 'pd.Index(["__getattribute__"])',
    "series": 'pd.Series(["__getattribute__"])',
    "np_str": 'np.str_("__getattribute__")',
    "lying_list": 'LyingList(["mean"])',
    "lying_dict": 'LyingDict(a="mean")',
    "deep_list": '[[[[[[[["__getattribute__"]]]]]]]]',
    "deep_dict": '{"v": [[[[[{"w": ["__getattribute__"]}]]]]]}',
    "tuple": '("__getattribute__",)',
    "callable_and_dict_like": 'CallableMapping()',
    "dunder_string": '"__getattribute__"',
    "private_string": '"_constructor"',
    "numpy_fallback_name": '"fromfile"',
}
CALL_SHAPES = {
    "series_agg_positional": 'pd.Series([1.0]).agg({spec}, 0, "__array_ufunc__")',
    "series_aggregate_kw": 'pd.Series([1.0]).aggregate(func={spec})',
    "series_apply": 'pd.Series([1.0]).apply({spec})',
    "series_transform_kw": 'pd.Series([1.0]).transform(func={spec})',
    "frame_agg": 'pd.DataFrame({{"v": [1.0]}}).agg({spec})',
    "frame_apply_kw": 'pd.DataFrame({{"v": [1.0]}}).apply(func={spec}, axis=0)',
    "groupby_agg": 'pd.DataFrame({{"k": [1], "v": [1.0]}}).groupby("k").agg({spec})',
    "groupby_named_agg": 'pd.DataFrame({{"k": [1], "v": [1.0]}}).groupby("k").agg(out=("v", {spec}))',
    "groupby_namedagg_object": 'pd.DataFrame({{"k": [1], "v": [1.0]}}).groupby("k").agg(out=pd.NamedAgg("v", {spec}))',
    "groupby_transform": 'pd.Series([1.0]).groupby(level=0).transform({spec})',
    "groupby_apply": 'pd.Series([1.0]).groupby(level=0).apply({spec})',
    "rolling_agg": 'pd.Series([1.0, 2.0]).rolling(2).agg({spec})',
    "expanding_aggregate": 'pd.Series([1.0, 2.0]).expanding().aggregate({spec})',
    "ewm_agg": 'pd.Series([1.0, 2.0]).ewm(span=2).agg({spec})',
    "resample_agg": 'pd.Series([1.0], index=pd.date_range("2024-01-01", periods=1)).resample("D").agg({spec})',
    "unbound_method": 'pd.Series.agg(pd.Series([1.0]), {spec})',
    "getattr_builtin": 'getattr(pd.Series([1.0]), "agg")({spec})',
    "via_pipe": 'pd.Series([1.0]).pipe(pd.Series.agg, {spec})',
    "pivot_table_aggfunc": 'pd.pivot_table(pd.DataFrame({{"k": [1], "v": [1.0]}}), values="v", index="k", aggfunc={spec})',
    "crosstab_aggfunc": 'pd.crosstab(pd.Series([1]), pd.Series([2]), values=pd.Series([1.0]), aggfunc={spec})',
    "star_args": 'pd.Series([1.0]).agg(*[{spec}, 0, "__array_ufunc__"])',
    "kwargs_splat": 'pd.Series([1.0]).agg(**{{"func": {spec}}})',
    "via_builtin_map": 'list(map(pd.Series([1.0]).agg, [{spec}]))',
    "via_partial": 'functools.partial(pd.Series([1.0]).agg, {spec})()',
    "as_sort_key": 'sorted([{spec}, {spec}], key=pd.Series([1.0]).agg)',
    "as_decorator": '(lambda: 0)() if False else decorate_with({spec})',
}
PRELUDE = '''
import collections
import functools


def decorate_with(spec):
    @pd.Series([1.0]).agg
    def hooked(series):
        return series
    return pd.Series([1.0]).agg(spec)

class LyingList(list):
    def __iter__(self):
        return iter(["__getattribute__"])

class LyingDict(dict):
    def values(self):
        return ["__getattribute__"]
    def __iter__(self):
        return iter(["__getattribute__"])

class CallableMapping:
    def keys(self):
        return ["v"]
    def __getitem__(self, key):
        return "__getattribute__"
    def __call__(self, x):
        return x
'''


@pytest.mark.parametrize("container", sorted(NAME_CONTAINERS))
@pytest.mark.parametrize("shape", sorted(CALL_SHAPES))
def test_string_dispatch_names_are_checked_on_every_path(shape: str, container: str) -> None:
    call = CALL_SHAPES[shape].format(spec=NAME_CONTAINERS[container])
    source = PRELUDE + PAYLOAD + f'''
def question(n):
    hook = {call}
    return [{{"question": str(hook), "options": ["a", "b"], "answer_index": 0}}]
'''
    result = run_policy_only(source)
    assert_stopped(result)


@pytest.mark.parametrize("call", [
    'pd.Series([1.0]).apply("max", backend="os")',
    'pd.Series([1.0]).rolling(2).mean(engine="numba")',
    'pd.Series([1.0]).rolling(2).apply(lambda w: 1.0, engine="numba", raw=True)',
    'pd.DataFrame({"v": [1.0]}).apply(lambda c: c, engine="numba")',
    'pd.Series([1.0]).rolling(2, win_type="numpy.fromfile")',
    'pd.Series([1.0]).rolling(2, None, False, np.str_("boxcar"))',
    'pd.Series([1.0]).rolling(2, win_type=AlwaysEqual())',
    'pd.Series([1.0]).rolling(2).mean(engine=AlwaysEqual())',
    'pd.Series([1.0]).map(np.array(["__getattribute__"]))',
    'pd.Series([1.0]).pipe(("__getattribute__", "x"))',
    'pd.Series([1.0]).to_string(float_format=np.str_("{0.__class__}"))',
    'pd.Series([1.0]).to_string(float_format="{0.__globals__}")',
])
def test_keyword_arguments_that_pick_code_by_name_are_refused(call: str) -> None:
    source = '''
class AlwaysEqual:
    def __eq__(self, other):
        return True
''' + f'''
def question(n):
    x = {call}
    return [{{"question": str(x), "options": ["a", "b"], "answer_index": 0}}]
'''
    assert_stopped(run_policy_only(source))


@pytest.mark.parametrize("body", [
    # ufunc out= with an object array, by keyword and by position, and ufunc.at in place
    'np.positive(np.array([1], dtype=object), out=np.empty(1, dtype=object))',
    'np.add(np.array([1], dtype=object), 1, np.empty(1, dtype=object))',
    'np.add.at(np.array([1, 2], dtype=object), [0], 1)',
    'np.add.reduce(np.array([1, 2], dtype=object), 0, None, np.empty((), dtype=object))',
    'np.cumsum(np.array([1.0]), out=pd.Series([0.0]))',
    # an object array holding callables
    'np.array([len, max], dtype=object)',
    'pd.Series([len])',
    'np.array([[1, pd.Series.agg]], dtype=object)',
    'pd.DataFrame({"f": [np.mean]})',
    'pd.Index([print])',
    'pd.Categorical([min, max])',
    # storing functions into arrays and frames by assignment
    'store_into(np.empty(2, dtype=object), len)',
    'store_into(pd.Series([1, 2], dtype=object), [max, min])',
    'store_into(pd.DataFrame({"a": [1]}), [print])',
])
def test_object_arrays_with_callables_and_object_out_are_refused(body: str) -> None:
    source = f'''
def store_into(target, value):
    target[0] = value
    return target

def question(n):
    x = {body}
    return [{{"question": "q", "options": ["a", "b"], "answer_index": 0}}]
'''
    assert_stopped(run_policy_only(source))


# --- values handed back by allow-listed objects --------------------------------------------------

class HostileSource(TinySource):
    """Stands in for a library that hands back internals: the policy must check what comes
    *out* of allow-listed calls, not only attribute names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def records(self) -> pd.DataFrame:
        danger = {"getattribute": object.__getattribute__, "bound_dunder": pd.Series([1.0]).__array_ufunc__,
                  "raw_dispatch": pd.Series([1.0]).agg, "module_function": os.getenv,
                  "builtin_eval": eval}[self.kind]
        return pd.DataFrame({"record_id": ["a"], "hook": pd.Series([danger], dtype=object)})


@pytest.mark.parametrize("kind", ["getattribute", "bound_dunder", "raw_dispatch", "module_function", "builtin_eval"])
@pytest.mark.parametrize("extract", [
    "handler.records()",
    "handler.records()['hook'][0]",
    "[x for x in handler.records()['hook']][0]",
    "list(handler.records()['hook'])[0]",
])
def test_values_returned_by_allow_listed_calls_are_checked(kind: str, extract: str) -> None:
    source = f'''
def question(n):
    value = {extract}
    return [{{"question": str(value), "options": ["a", "b"], "answer_index": 0}}]
'''
    assert_stopped(run_policy_only(source, HostileSource(kind)))


@pytest.mark.parametrize(("value", "how"), [
    (object.__getattribute__, "call"), (pd.Series.__array_ufunc__, "call"), ([1, [object.__getattribute__]], "call"),
    ({"k": (1, eval)}, "call"), (collections.deque([os.system]), "call"), (np.array([len], dtype=object), "call"),
    (pd.DataFrame({"a": [1]}, index=pd.Index([object.__subclasshook__])), "call"),
    (pd.Series([1.0], name=object.__getattribute__), "call"), (os, "call"),
    ([pd.Series([1.0]).agg], "call"),
    (pd.Series([(1, object.__getattribute__)], dtype=object), "iterate"),
    (np.array([(1, eval)], dtype=object), "iterate"),
])
def test_call_results_and_iteration_are_checked_at_every_depth(value: object, how: str) -> None:
    if how == "call":
        with pytest.raises(policy.ValueRefused):
            policy.guarded_call(lambda: value)
    else:
        with pytest.raises(policy.ValueRefused):
            list(policy.guarded_iter(value))


def test_lying_container_subclasses_are_walked_with_their_base_type() -> None:
    class Lying(list):
        def __iter__(self):
            return iter([1])

    class LyingMap(dict):
        def values(self):
            return [1]

    with pytest.raises(policy.ValueRefused):
        policy.check_deep(Lying([object.__getattribute__]))
    with pytest.raises(policy.ValueRefused):
        policy.check_deep(LyingMap(a=eval))


def test_deep_check_has_no_depth_limit_and_survives_cycles() -> None:
    nested: list = [eval]
    for _ in range(5000):
        nested = [nested]
    with pytest.raises(policy.ValueRefused):
        policy.check_deep(nested)
    cycle: list = [1]
    cycle.append(cycle)
    assert policy.check_deep(cycle) is cycle


def test_a_raw_pandas_dispatcher_crossing_alone_gets_its_guard() -> None:
    guarded = policy.check_value(pd.Series([1.0]).agg)
    with pytest.raises(dispatch.DispatchRefused):
        guarded(np.array(["__getattribute__"]))
    assert guarded("sum") == 1.0


def test_calling_a_dunder_is_refused_however_it_was_obtained() -> None:
    for danger in (object.__getattribute__, pd.Series([1.0]).__array_ufunc__, (1).__add__, eval, os.system):
        with pytest.raises(policy.ValueRefused):
            policy.guarded_call(danger)


def test_with_bindings_and_decorators_are_checked() -> None:
    with pytest.raises(policy.ValueRefused):
        policy.guard_with_value(object.__getattribute__)
    with pytest.raises(policy.ValueRefused):
        policy.guard_decorator(lambda f: [f, eval])(len)
    with pytest.raises(policy.ValueRefused):
        policy.guard_decorator(object.__getattribute__)(len)


def test_callback_parameters_are_checked() -> None:
    result = run_policy_only('''
        def question(n):
            def callback(value):
                return 1.0
            handler.records()
            return []
        ''', HostileSource("getattribute"))
    assert_stopped(result)
    with pytest.raises(policy.ValueRefused):
        policy.guard_args((1, object.__getattribute__), None, None)
    with pytest.raises(policy.ValueRefused):
        policy.guard_args((), (eval,), None)
    with pytest.raises(policy.ValueRefused):
        policy.guard_args((), None, {"k": os.system})


@pytest.mark.parametrize("source", [
    "super = print",
    "def f(super):\n    pass",
    "def super():\n    pass",
    "for super in []:\n    pass",
    "import math as super",
])
def test_super_cannot_be_rebound(source: str) -> None:
    with pytest.raises(policy.TemplateRefused):
        policy.compile_template(source)


def test_format_walks_are_refused_for_str_subclasses() -> None:
    result = run_policy_only('''
        def question(n):
            return [{"question": np.str_("{0.__class__}").format(1), "options": ["a", "b"], "answer_index": 0}]
        ''')
    assert_stopped(result)


@pytest.mark.parametrize("shape", sorted(set(CALL_SHAPES) - {"series_agg_positional"}))
def test_the_same_call_shapes_run_with_an_allowed_name(shape: str) -> None:
    """Control for the matrix above: with "sum" in place of the hostile spec every call shape
    runs, so the refusals above come from the name check, not from a broken harness."""
    spec = '"cumsum"' if "transform" in shape else '"sum"'
    call = CALL_SHAPES[shape].format(spec=spec).replace(', 0, "__array_ufunc__"]', "]")
    source = PRELUDE + f'''
def question(n):
    hook = {call}
    return [{{"question": "q", "options": ["a", "b"], "answer_index": 0}}]
'''
    result = run_policy_only(source)
    assert result["status"] == "ok", result


# --- items that would change between runs (red-team findings) ---------------------------------

CLOCK_BY_STRING = [
    'np.datetime64("today")', 'np.datetime64(" NOW ")', 'pd.Timestamp("now")', 'pd.to_datetime(["today"])',
    'pd.date_range(end="now", periods=1)', 'pd.DatetimeIndex(["now"])',
    'np.array(["now"], dtype="datetime64[s]")', 'pd.Series(["today"]).astype("datetime64[ns]")',
    'pd.to_datetime(pd.Series(["x", "now"]).iloc[1:])', 'pd.DataFrame({"d": ["today"]}).astype("datetime64[ns]")',
    'pd.Series(["today"]).apply(pd.Timestamp)', 'np.array([["n" + "ow"]]).astype("datetime64[s]")',
    'np.datetime64(b"now")',
]


@pytest.mark.parametrize("expression", CLOCK_BY_STRING)
def test_the_clock_cannot_be_read_through_date_strings(expression: str) -> None:
    result = run_policy_only(f'''
def question(n):
    late = {expression}
    return [{{"question": "Which? " + str(late), "options": ["a", "b"], "answer_index": 0}}]
''')
    assert result["status"] in FAILED and "read the clock" in result["error"], result


def test_ordinary_date_strings_and_words_still_work() -> None:
    result = run_policy_only('''
def question(n):
    days = pd.date_range("2024-01-01", periods=3, freq="D")
    when = np.datetime64("2024-02-01") - np.datetime64("2024-01-01")
    labels = pd.Series(["rain", "sun", "nowhere", "today's max"]).str.upper().tolist()
    return [{"question": "Gap? " + str(when) + " " + ", ".join(labels), "options": [str(days[0]), "b"],
             "answer_index": 0}]
''')
    assert result["status"] == "ok", result


def _items(source: str, seed: int) -> list:
    text = run_template_here(textwrap.dedent(source), handler=HandlerView(TinySource()), num_samples=3, seed=seed,
                             output_bytes=1 << 20, print_bytes=4096, synth=proxies.synth_proxy())
    result = json.loads(text)
    assert result["status"] == "ok", result
    return result["items"]


GLOBAL_RNG = '''
def question(n):
    order = pd.DataFrame({"k": range(50)}).sample(frac=1)["k"].tolist()
    return [{"question": "Record " + str(order[i]), "options": ["a", "b"], "answer_index": 0} for i in range(n)]
'''


def test_library_draws_from_the_global_generator_repeat_with_the_seed() -> None:
    np.random.seed(12345)  # another state than any run's: the run must not depend on it
    first = _items(GLOBAL_RNG, seed=7)
    np.random.seed(999)
    assert _items(GLOBAL_RNG, seed=7) == first
    assert _items(GLOBAL_RNG, seed=8) != first


@pytest.mark.parametrize("expression", [
    "np.random.seed()", "statistics.NormalDist(0, 1).samples(1)", "(statistics.NormalDist(0, 1) + 1).samples(2)",
    "statistics.NormalDist.samples(statistics.NormalDist(), 1)",
])
def test_os_entropy_sources_are_refused(expression: str) -> None:
    result = run_policy_only(f'''
def question(n):
    z = {expression}
    return [{{"question": "z " + str(z), "options": ["a", "b"], "answer_index": 0}}]
''')
    assert result["status"] in FAILED and ("explicit seed" in result["error"] or "needs seed=" in result["error"]), \
        result


def test_seeded_entropy_sources_still_work() -> None:
    source = '''
def question(n):
    np.random.seed(3)
    z = statistics.NormalDist(0, 1).samples(2, seed=5)
    return [{"question": "z " + str(z) + str(np.random.randint(100)), "options": ["a", "b"], "answer_index": 0}]
'''
    assert _items(source, seed=1) == _items(source, seed=2)


@pytest.mark.parametrize("expression", [
    "functools.partial(np.add)(np.array([1], dtype=object), np.array([2], dtype=object), out)",
    "functools.partial(functools.partial(np.add), np.array([1], dtype=object))(np.array([2], dtype=object), out)",
    "functools.partial(np.add, out=out)(np.array([1], dtype=object), np.array([2], dtype=object))",
])
def test_partial_does_not_hide_an_object_out_array(expression: str) -> None:
    result = run_policy_only(f'''
import functools
def question(n):
    out = np.empty(1, dtype=object)
    {expression}
    return [{{"question": "x", "options": ["a", "b"], "answer_index": 0}}]
''')
    assert result["status"] in FAILED and "out=" in result["error"], result


def test_sparse_object_series_cannot_hold_a_function() -> None:
    result = run_policy_only('''
def question(n):
    def f(x):
        return x
    s = pd.Series([f, 1], dtype="Sparse[object]")
    return [{"question": "x", "options": ["a", "b"], "answer_index": 0}]
''')
    assert result["status"] in FAILED and "holding functions" in result["error"], result


# --- super() hands out raw dunders ----------------------------------------------------------------
#
# `super().__init__(...)` in a template's own classes is the one dunder templates may read. Bound to a
# library object instead (`super(pd.Series, s)`), it returned NDFrame.__init__ unchecked and
# `Series.apply(init)` re-initialised the template's Series from library code. Every way of reaching
# the attribute must go through the same rule as a direct dunder read.

SUPER_DUNDERS = {
    "reported_chain_apply": "init = super(pd.Series, s).__init__\n    pd.Series([3.0]).apply(init)",
    "getattr_builtin": 'init = getattr(super(pd.Series, s), "__init__")',
    "aliased_super": 'sup = super\n    init = getattr(sup(pd.Series, s), "__init__")',
    "builtins_super_via_partial": 'import functools\n    init = functools.partial(getattr, super(pd.Series, s))("__init__")',
    "reduce_getattr": 'import functools\n    init = functools.reduce(getattr, ["__init__"], super(pd.Series, s))',
    "map_getattr": 'init = list(map(getattr, [super(pd.Series, s)], ["__init__"]))[0]',
    "apply_getattr": 'init = pd.Series([super(pd.Series, s)], dtype=object).apply(getattr, args=("__init__",))',
    "setattr_dunder": 'init = getattr(super(pd.DataFrame, pd.DataFrame({"a": [1]})), "__setattr__")',
    "own_class_bound_to_series": '''class Mine(object):
        pass
    init = getattr(super(Mine, s), "__init__")''',
    "own_class_bound_to_class": '''class Mine(object):
        pass
    init = getattr(super(Mine, Mine), "__init__")''',
    "own_class_other_dunder": '''class Mine(dict):
        def grab(self):
            return getattr(super(), "__setitem__")
    init = Mine().grab()''',
    "own_instance_of_other_class": '''class Mine(object):
        pass
    class Other(object):
        pass
    init = getattr(super(Mine, Other()), "__init__")''',
}


@pytest.mark.parametrize("name", sorted(SUPER_DUNDERS))
def test_super_does_not_hand_out_library_dunders(name: str) -> None:
    result = run_policy_only(f'''
def question(n):
    s = pd.Series([1.0, 2.0])
    {SUPER_DUNDERS[name]}
    return [{{"question": str(init) + str(s.tolist()), "options": ["a", "b"], "answer_index": 0}}]
''')
    assert result["status"] in FAILED, result
    assert "not accessible in templates" in result["error"] or "not available in templates" in result["error"] \
        or "must be an instance" in result["error"], result


def test_getattr_with_a_default_gets_the_default_not_the_method() -> None:
    result = run_policy_only('''
def question(n):
    s = pd.Series([1.0, 2.0])
    init = getattr(super(pd.Series, s), "__init__", None)
    return [{"question": str(init) + " " + str(s.tolist()), "options": ["a", "b"], "answer_index": 0}]
''')
    assert result["status"] == "ok" and result["items"][0]["question"] == "None [1.0, 2.0]", result


def test_super_refusal_does_not_depend_on_the_compile_step() -> None:
    series = pd.Series([1.0])
    for bound in (super(pd.Series, series), super(pd.Series, pd.Series), super(object, series)):
        with pytest.raises(AttributeError, match="not accessible"):
            policy.guarded_getattr(bound, "__init__")
        assert policy.guarded_hasattr(bound, "__init__") is False


def test_super_init_in_a_templates_own_classes_still_works() -> None:
    result = run_policy_only('''
class Base(object):
    def __init__(self, start):
        self.start = start
class Child(Base):
    def __init__(self):
        super().__init__(5)
        self.extra = hasattr(super(), "__init__")
class Tally(dict):
    def __init__(self):
        super(Tally, self).__init__(a=1)
class Oops(ValueError):
    def __init__(self, message):
        super().__init__(message)
def question(n):
    c = Child()
    t = Tally()
    text = str(Oops("boom"))
    return [{"question": f"{c.start} {c.extra} {t['a']} {text}", "options": ["a", "b"], "answer_index": 0}]
''')
    assert result["status"] == "ok", result
    assert result["items"][0]["question"] == "5 True 1 boom"
