"""The policy layer on its own, in-process: compilation, guards, proxies, output checks.

These run only benign probes (they check that a guard says no); hostile templates run
through the isolated executor in test_attacks.py.
"""

from __future__ import annotations

import collections
import json
import math
import types

import numpy as np
import pandas as pd
import pytest

from itemsmith.sandbox import policy, proxies
from itemsmith.sandbox.handler_data import HandlerView, SnapshotError, decode_snapshot, snapshot_round_trip
from itemsmith.sandbox.output import OutputError, parse_plain_json, to_plain_json
from itemsmith.sandbox.runner import describe_exception, make_namespace, run_template_here


class TinySource:
    name = "tiny"
    description = "two records"

    def records(self) -> pd.DataFrame:
        return pd.DataFrame({"record_id": ["a", "b"], "label": ["x", "y"]})

    def series(self, record_id: object) -> pd.DataFrame:
        return pd.DataFrame({"v": np.arange(6.0)}, index=pd.date_range("2024-01-01", periods=6, freq="D"))


def run_here(source: str, num_samples: int = 1) -> dict:
    text = run_template_here(source, handler=HandlerView(TinySource()), num_samples=num_samples, seed=0,
                             output_bytes=1 << 20, print_bytes=4096, synth=proxies.synth_proxy())
    return json.loads(text)


# --- compile time ------------------------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "import os", "from subprocess import run", "import numpy.ctypeslib", "from . import x",
    "x = ().__class__", "x = __import__('os')", "eval('1')", "exec('1')", "x = __builtins__",
    "def f():\n    g = (i for i in [1])\n    return g.gi_frame", "async def f():\n    pass",
    "try:\n    pass\nexcept* ValueError:\n    pass", "class A:\n    def __getattribute__(self, n):\n        pass",
    "class A(metaclass=type):\n    pass", "x = 1\nx.__dict__ += 1", "_getattr_ = 1", "breakpoint()",
    "def f(__x):\n    pass", "match 1:\n    case 1:\n        pass",
])
def test_compile_refuses(source: str) -> None:
    with pytest.raises(policy.TemplateRefused):
        policy.compile_template(source)


def test_compile_refuses_oversized_source() -> None:
    with pytest.raises(policy.TemplateRefused, match="larger than"):
        policy.compile_template("x = 1\n" * 1000, max_bytes=100)


@pytest.mark.parametrize("source", [
    "import numpy as np\nimport pandas as pd\nfrom collections import Counter, defaultdict\nimport math, random",
    "from numpy.fft import rfft\nfrom numpy import linalg\nimport numpy.random",
    "from __future__ import annotations\ndef f(x: list[int]) -> dict:\n    print(x)\n    return {}",
    "class A:\n    def __init__(self):\n        self.n = 0\n    def __repr__(self):\n        return 'A'\n"
    "    def __len__(self):\n        return 1",
    "class E(ValueError):\n    def __init__(self, m):\n        super().__init__(m)",
    "d = {}\nd['k'] = 1\nd['k'] += 1\nx = [1]\nx[0] *= 3\nx[0:1] += [2]",
    "class C:\n    pass\nc = C()\nc.n = 1\nc.n += 1",
    "s = f'{1:.2f} {2!r}'\nt = '{:.3f}'.format(1.0)",
])
def test_compile_accepts_ordinary_code(source: str) -> None:
    assert isinstance(policy.compile_template(source), types.CodeType)


def test_augmented_assignment_semantics() -> None:
    result = run_here(
        "from collections import Counter\n"
        "class C:\n    def __init__(self):\n        self.n = 1\n"
        "def question(n):\n"
        "    c = C(); c.n += 4; c.n *= 2\n"
        "    d = {'a': 1}; d['a'] += 1; d['b'] = 0; d['b'] -= 3\n"
        "    cnt = Counter(); cnt['x'] += 2\n"
        "    arr = np.zeros(4); arr[1:3] += 5; arr[0] -= 1\n"
        "    df = pd.DataFrame({'v': [1.0, 2.0]}); df['v'] += 1; df.loc[0, 'v'] *= 10\n"
        "    lst = [1, 2]; lst[0] += 10; lst += [3]\n"
        "    return [{'question': 'q', 'options': ['a', 'b'], 'answer_index': 0,\n"
        "             'metadata': {'c': c.n, 'd': d, 'cnt': cnt['x'], 'arr': arr.tolist(), 'df': df['v'].tolist(),\n"
        "                          'lst': lst}}]\n")
    assert result["status"] == "ok", result
    meta = result["items"][0]["metadata"]
    assert meta == {"c": 10, "d": {"a": 2, "b": -3}, "cnt": 2, "arr": [-1.0, 5.0, 5.0, 0.0], "df": [20.0, 3.0],
                    "lst": [11, 2, 3]}


# --- attribute guard -----------------------------------------------------------------------------

@pytest.mark.parametrize(("obj", "name"), [
    ((), "__class__"), (len, "__self__"), (np.zeros(2), "ctypes"), (np.zeros(2), "tofile"), (np.zeros(2), "data"),
    (np.zeros(2), "resize"), (np.zeros(2), "setflags"), (np.zeros(2), "flags"), (np.float64(1), "tofile"),
    (pd.DataFrame(), "to_pickle"), (pd.DataFrame(), "to_csv"), (pd.DataFrame(), "eval"), (pd.DataFrame(), "query"),
    (pd.DataFrame(), "plot"), (pd.DataFrame(), "style"), (pd.Series(dtype=float), "to_json"), (pd.DataFrame, "to_sql"),
    (np.random.default_rng(0), "bit_generator"), (np.random.default_rng(0), "__setstate__"), (str, "mro"),
    ((x for x in []), "gi_frame"), ((x for x in []), "gi_code"), (AttributeError("x", obj=np), "obj"),
    (proxies.PANDAS, "read_csv"), (proxies.PANDAS, "io"), (proxies.PANDAS, "set_option"), (proxies.MATH, "__dict__"),
])
def test_getattr_denies(obj: object, name: str) -> None:
    with pytest.raises(AttributeError):
        policy.guarded_getattr(obj, name)


@pytest.mark.parametrize(("obj", "name"), [
    (np.zeros(2), "mean"), (np.zeros(2), "tolist"), (np.zeros(2), "shape"), (pd.DataFrame({"a": [1]}), "to_numpy"),
    (pd.DataFrame({"a": [1]}), "to_dict"), (pd.DataFrame({"a": [1]}), "a"), (pd.Series([1.0]), "rolling"),
    (np.random.default_rng(0), "normal"), (np.random.default_rng(0), "integers"), (proxies.RE, "compile"),
    (pd.Timestamp("2024-01-01"), "strftime"), (pd.Series(["a"]), "str"),
])
def test_getattr_allows(obj: object, name: str) -> None:
    policy.guarded_getattr(obj, name)


def test_user_objects_keep_ordinary_attribute_names() -> None:
    result = run_here(
        "class Q:\n    def __init__(self):\n        self.options = ['a', 'b']\n        self.query = 'q'\n"
        "        self.load = 1\n"
        "def question(n):\n    q = Q()\n"
        "    return [{'question': q.query, 'options': q.options, 'answer_index': q.load - 1}]\n")
    assert result["status"] == "ok", result


def test_values_that_are_modules_are_refused() -> None:
    holder = types.SimpleNamespace(mod=json)
    with pytest.raises(AttributeError):
        policy.guarded_getattr(holder, "mod")
    with pytest.raises(TypeError):
        policy.guarded_getitem({"m": json}, "m")
    with pytest.raises(AttributeError):
        policy.guarded_getattr(types.SimpleNamespace(f=open), "f")


def test_builtin_getattr_and_hasattr() -> None:
    assert policy.guarded_getattr_builtin((), "__class__", "no") == "no"
    assert policy.guarded_hasattr((), "__class__") is False
    assert policy.guarded_hasattr([], "append") is True


# --- str.format --------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["{:.2f}", "{0} and {1}", "{name}: {value:>{width}}", "{{literal}}", "{!r}", "%d"])
def test_format_strings_allowed(fmt: str) -> None:
    policy.check_format_string(fmt)


@pytest.mark.parametrize("fmt", ["{0.__class__}", "{x.real}", "{0[0]}", "{a[key]}", "{0:{1.__class__}}",
                                 "{0:{x[0]}}"])
def test_format_strings_refused(fmt: str) -> None:
    with pytest.raises(ValueError):
        policy.check_format_string(fmt)


def test_safe_format_wrappers() -> None:
    assert policy.guarded_getattr("{:.1f}", "format")(2.25) == "2.2"
    assert policy.guarded_getattr("{a}", "format_map")({"a": 1}) == "1"
    assert policy.guarded_getattr(str, "format")("{}-{}", 1, 2) == "1-2"
    with pytest.raises(ValueError):
        policy.guarded_getattr("{0.__class__}", "format")(1)
    with pytest.raises(ValueError):
        policy.guarded_getattr(str, "format")("{0.real}", 1)


# --- pandas string dispatch ------------------------------------------------------------------------

def test_dispatch_guard_allows_safe_names_and_callables() -> None:
    df = pd.DataFrame({"g": [1, 1, 2], "v": [1.0, 2.0, 3.0]})
    agg = policy.guarded_getattr(df.groupby("g"), "agg")
    assert list(agg("mean")["v"]) == [1.5, 3.0]
    assert list(agg({"v": ["sum", "max"]}).columns.get_level_values(1)) == ["sum", "max"]
    assert list(agg(total=("v", "sum"))["total"]) == [3.0, 3.0]
    assert float(policy.guarded_getattr(df["v"], "apply")(lambda x: x * 2).sum()) == 12.0
    assert policy.guarded_getattr(df["v"], "rolling")(2, win_type="boxcar").mean().iloc[-1] == 2.5


@pytest.mark.parametrize("spec", [
    np.mean, np.sqrt, [np.mean, "max"], {"v": [np.std, "min"]}, math.sqrt, float, lambda x: x,
    ("sum", "mean"), {"v": ("sum", np.max)}, round, str.lower,
])
def test_dispatch_accepts_the_callables_templates_pass(spec: object) -> None:
    if spec is str.lower:
        assert list(policy.guarded_getattr(pd.Series(["A", "b"]), "apply")(spec)) == ["a", "b"]
        return
    policy.guarded_getattr(pd.Series([1.0, 4.0]), "apply")(spec)


@pytest.mark.parametrize("call", [
    lambda g: g(pd.DataFrame({"a": [1]}), "agg")("eval"),
    lambda g: g(pd.DataFrame({"a": [1]}), "aggregate")(func="to_pickle"),
    lambda g: g(pd.DataFrame({"a": [1]}), "agg")({"a": ["mean", "query"]}),
    lambda g: g(pd.DataFrame({"a": [1]}), "transform")("to_clipboard"),
    lambda g: g(pd.DataFrame({"a": [1]}), "apply")(lambda r: r, engine="numba"),
    lambda g: g(pd.DataFrame({"g": [1], "a": [1]}).groupby("g"), "agg")(x=("a", "eval")),
    lambda g: g(pd.DataFrame, "agg")(pd.DataFrame({"a": [1]}), "eval"),
    lambda g: g(pd.Series([1.0, 2.0]), "rolling")(2, win_type="get_window"),
    lambda g: g(pd.DataFrame({"a": [1.0]}), "to_string")(buf="/tmp/x"),
    lambda g: g(pd.DataFrame({"a": [1.0]}), "to_string")(float_format="{0.__class__}"),
    lambda g: g(pd.Series([1.0]), "agg")("fromfile"),
    lambda g: g(pd.DataFrame({"g": [1], "v": [1.0]}), "pivot_table")(values="v", index="g", aggfunc="to_pickle"),
    lambda g: g(proxies.PANDAS, "pivot_table")(pd.DataFrame({"g": [1], "v": [1.0]}), "v", "g", None, "to_pickle"),
    lambda g: g(proxies.PANDAS, "crosstab")(pd.Series([1]), pd.Series([1]), values=pd.Series([1.0]),
                                            aggfunc={"x": "eval"}),
])
def test_dispatch_guard_refuses(call) -> None:
    with pytest.raises(ValueError):
        call(policy.guarded_getattr)


# --- writes ------------------------------------------------------------------------------------------

def test_write_policy() -> None:
    writes = policy.WritePolicy()
    for container in ({}, [], collections.Counter(), collections.defaultdict(int)):
        assert writes.write(container) is container
    frame = pd.DataFrame({"a": [1]})
    writes.write(frame)["b"] = 2
    writes.write(frame).columns = ["x", "y"]
    assert list(frame.columns) == ["x", "y"]
    with pytest.raises(TypeError):
        writes.write(frame).some_attribute = 1
    with pytest.raises(TypeError):
        writes.write(np.zeros(2)).strides = (1,)
    for target in (proxies.PANDAS, proxies.MATH, np.random.default_rng(0), len, pd.DataFrame, HandlerView(TinySource())):
        with pytest.raises(TypeError):
            writes.write(target)
    with pytest.raises(AttributeError):
        writes.setattr({}, "__class__", dict)


def test_classes_derive_only_from_allowed_bases() -> None:
    writes = policy.WritePolicy()
    base = writes.metaclass("Base", (), {})
    writes.metaclass("Child", (base,), {})
    writes.metaclass("Err", (ValueError,), {})
    writes.metaclass("D", (dict,), {})
    for forbidden in (pd.DataFrame, np.ndarray, str, type, types.SimpleNamespace):
        with pytest.raises(TypeError):
            writes.metaclass("X", (forbidden,), {})


def test_importer() -> None:
    randomness = proxies.RunRandomness(0)
    importer = proxies.make_importer(proxies.import_table(proxies.numpy_proxy(randomness), proxies.random_proxy(randomness)))
    assert isinstance(importer("numpy"), proxies.ModuleProxy)
    assert importer("numpy.fft", fromlist=("rfft",)) is proxies.NUMPY_FFT
    assert isinstance(importer("numpy.fft"), proxies.ModuleProxy)  # `import numpy.fft` binds numpy
    with pytest.raises(ImportError):
        importer("definitely_not_loaded_module_xyz")
    with pytest.raises(ImportError):
        importer("numpy", level=1)


def test_proxies_hold_no_modules_and_are_read_only() -> None:
    randomness = proxies.RunRandomness(0)
    np_proxy = proxies.numpy_proxy(randomness)
    for proxy in (np_proxy, proxies.PANDAS, proxies.MATH, proxies.STATISTICS, proxies.DATETIME, proxies.RE):
        for name, value in proxies.proxy_members(proxy).items():
            assert not isinstance(value, types.ModuleType), name
        with pytest.raises(TypeError):
            proxy.anything = 1
    with pytest.raises(TypeError):
        np_proxy.ndarray((2,), buffer=np.zeros(2), offset=-8)
    assert isinstance(np.zeros(1), np_proxy.ndarray)
    with pytest.raises(AttributeError):
        np_proxy.load  # noqa: B018


def test_seeded_randomness_is_deterministic() -> None:
    src = ("def question(n):\n    return [{'question': str([rng.normal(), np.random.rand(), random.random(), "
           "np.random.default_rng().integers(100)]), 'options': ['a', 'b'], 'answer_index': 0}]\n")
    assert run_here(src) == run_here(src)


# --- reachability ----------------------------------------------------------------------------------

def _crawl(getter, roots: dict[str, object], depth: int) -> list[tuple[str, object]]:
    seen: set[int] = set()
    frontier = list(roots.items())
    reached: list[tuple[str, object]] = []
    for _ in range(depth):
        nxt = []
        for path, obj in frontier:
            if id(obj) in seen or isinstance(obj, (int, float, str, bytes, bool, type(None))):
                continue
            seen.add(id(obj))
            try:
                names = [n for n in dir(obj) if not n.startswith("_")]
            except Exception:  # noqa: BLE001
                continue
            for name in names:
                try:
                    value = getter(obj, name)
                except Exception:  # noqa: BLE001 - denied, or a property that raises
                    continue
                reached.append((f"{path}.{name}", value))
                nxt.append((f"{path}.{name}", value))
        frontier = nxt
    return reached


def test_no_module_or_dangerous_callable_is_reachable() -> None:
    """Walk public attributes two hops from everything a template starts with (and typical
    numpy/pandas objects it can make): no module, no I/O or eval entry point is reachable."""
    import warnings

    warnings.simplefilter("ignore")
    namespace = make_namespace(HandlerView(TinySource()), 0, policy.PrintSink(10), proxies.synth_proxy())
    df = pd.DataFrame({"a": np.arange(6.0), "b": list("ababab"), "t": pd.date_range("2024", periods=6, freq="D")})
    roots = {k: v for k, v in namespace.items() if not k.startswith("_")}
    roots.update({"df": df, "series": df["a"], "arr": np.arange(3.0), "gb": df.groupby("b"), "roll": df["a"].rolling(2),
                  "res": df.set_index("t").resample("2D"), "ts": pd.Timestamp("2024-01-01"), "str": df["b"].str,
                  "dt": df["t"].dt, "scalar": np.float64(1.0), "dtype": np.dtype("f8")})
    dangerous_names = policy.DENIED_ATTRIBUTES | {"to_pickle", "to_csv", "read_csv", "read_pickle"}
    raw = _crawl(getattr, roots, 2)
    assert any(path.endswith(".to_pickle") for path, _ in raw)  # the crawler does reach them unguarded
    guarded = _crawl(policy.guarded_getattr, roots, 2)
    assert len(guarded) > 1000
    bad_values = {id(v) for v in (open, eval, exec, compile, __import__, type, np.ndarray, np.load, pd.read_pickle)}
    for path, value in guarded:
        leaf = path.rsplit(".", 1)[-1]
        assert not isinstance(value, types.ModuleType), path
        assert id(value) not in bad_values, path
        assert leaf not in dangerous_names or path == "handler.query", path  # query(record_id) is the alias


# --- output --------------------------------------------------------------------------------------------

class Hostile:
    def __eq__(self, other):
        raise AssertionError("called __eq__")

    def __hash__(self):
        raise AssertionError("called __hash__")

    def __iter__(self):
        raise AssertionError("called __iter__")

    def __str__(self):
        raise AssertionError("called __str__")


class HostileDict(dict):
    def items(self):
        raise AssertionError("called items")

    def __iter__(self):
        raise AssertionError("called __iter__")


class HostileStr(str):
    def __eq__(self, other):
        raise AssertionError("called __eq__")

    __hash__ = str.__hash__


def test_plain_json_converts_numpy_and_tuples() -> None:
    text = to_plain_json([{"a": np.float64(1.5), "b": (1, np.int64(2)), "c": np.array([1, 2]), "d": np.str_("x"),
                           "e": np.bool_(True)}], 1 << 20)
    assert json.loads(text) == [{"a": 1.5, "b": [1, 2], "c": [1, 2], "d": "x", "e": True}]


@pytest.mark.parametrize("value", [
    [Hostile()], [HostileDict(a=1)], [{HostileStr("k"): 1}], [{"k": HostileStr("v")}], [{1: "int key"}],
    [float("nan")], [math.inf], [{"x": {1, 2}}], [pd.Timestamp("2024-01-01")], [np.array([object()])],
])
def test_plain_json_refuses_without_calling_methods(value: object) -> None:
    with pytest.raises(OutputError):
        to_plain_json(value, 1 << 20)


def test_plain_json_limits() -> None:
    with pytest.raises(OutputError, match="larger"):
        to_plain_json(["x" * 2000], 1000)
    nested: list = []
    for _ in range(100):
        nested = [nested]
    with pytest.raises(OutputError, match="nested"):
        to_plain_json(nested, 1 << 20)


@pytest.mark.parametrize("raw", [b"[NaN]", b"[Infinity]", b"{", b"\xff", b"[" * 100000 + b"]" * 100000, b"x" * 2000])
def test_host_parse_refuses(raw: bytes) -> None:
    with pytest.raises(OutputError):
        parse_plain_json(raw, 1000 if len(raw) == 2000 else 1 << 20)


def test_host_parse_accepts_plain_json() -> None:
    assert parse_plain_json(b'[{"a": [1, 2.5, "x", true, null]}]', 1000) == [{"a": [1, 2.5, "x", True, None]}]


# --- error text --------------------------------------------------------------------------------------

def test_error_names_the_template_line_only() -> None:
    source = "def helper(a, b):\n    return a / b\n\ndef question(n):\n    x = helper(1, 0)\n    return []\n"
    result = run_here(source)
    assert result["status"] == "error"
    assert result["error"] == "ZeroDivisionError: division by zero (template line 2: return a / b)"
    assert "line 5" in result["traceback"] and "sandbox" not in result["traceback"]
    library = run_here("def question(n):\n    return pd.DataFrame({'a': [1]})['missing']\n")
    assert library["error"].startswith("KeyError: 'missing' (template line 2:")
    assert "/" not in library["error"].split("template line")[0]  # no library file paths


def test_describe_exception_without_template_frames() -> None:
    error, tail = describe_exception(ValueError("bad"), "x = 1\n")
    assert error == "ValueError: bad" and tail is None


def test_missing_question_function() -> None:
    assert "question(num_samples)" in run_here("x = 1\n")["error"]


# --- handler data ------------------------------------------------------------------------------------

def test_handler_view_returns_fresh_copies() -> None:
    view = HandlerView(TinySource())
    records = view.records()
    records["label"] = "changed"
    assert list(view.get_dataframe()["label"]) == ["x", "y"]
    frame = view.query("a")
    frame["v"] = 0
    assert float(view.series("a")["v"].iloc[3]) == 3.0
    with pytest.raises(TypeError):
        view.name = "other"


def test_snapshot_round_trip_and_malformed_input() -> None:
    snap = snapshot_round_trip(TinySource(), max_bytes=1 << 20, max_records=10)
    assert list(snap.records()["record_id"]) == ["a", "b"]
    assert list(snap.series(np.str_("b"))["v"]) == list(np.arange(6.0))
    with pytest.raises(KeyError):
        snap.series("zzz")
    with pytest.raises(SnapshotError):
        snapshot_round_trip(TinySource(), max_bytes=10, max_records=10)
    with pytest.raises(SnapshotError):
        snapshot_round_trip(TinySource(), max_bytes=1 << 20, max_records=1)
    for bad in (b"", b"not a snapshot", b"ISNAP1\n" + (10**9).to_bytes(8, "little"),
                b"ISNAP1\n" + (2).to_bytes(8, "little") + b"{}"):
        with pytest.raises(SnapshotError):
            decode_snapshot(bad)


# --- benign code keeps running under the value guards ---------------------------------------

ORDINARY_TEMPLATE = '''
import functools
import itertools
import random
import re
from collections import Counter, defaultdict, namedtuple

Point = namedtuple("Point", "x y")


class Describer:
    scale = 2

    def __init__(self, frame, *, label="v"):
        self.frame = frame
        self.label = label

    @property
    def mean(self):
        return float(self.frame[self.label].mean())

    @staticmethod
    def direction(delta):
        return "up" if delta > 0 else "down" if delta < 0 else "flat"

    @classmethod
    def scaled(cls, value):
        return value * cls.scale


class LabelError(ValueError):
    def __init__(self, message):
        super().__init__(message)


@functools.lru_cache(maxsize=None)
def cached_square(x):
    return x * x


def summarize(*values, **options):
    total = functools.reduce(lambda a, b: a + b, values, 0.0)
    return round(total / max(len(values), 1), options.get("digits", 2))


def question(num_samples):
    r = random.Random(1234)
    records = handler.records()
    items = []
    for i in range(num_samples):
        record_id = r.choice(sorted(records["record_id"].tolist()))
        frame = handler.series(record_id)
        d = Describer(frame)
        weekly = frame["v"].rolling(2, min_periods=1).mean()
        agg = frame.agg(["mean", "max"]).to_dict()
        named = frame.assign(k=[j % 2 for j in range(len(frame))]).groupby("k").agg(
            total=("v", "sum"), peak=("v", lambda s: float(s.max())))
        resampled = frame["v"].resample("2D").agg("mean").tolist()
        mapped = pd.Series(["a", "b", "a"]).map({"a": "alpha", "b": "beta"}).tolist()
        piped = frame.pipe(lambda f, k=1: f["v"] * k, k=3).sum()
        applied = frame["v"].apply(lambda v, offset=0.0: v + offset, offset=1.0).tolist()
        counts = Counter(itertools.chain.from_iterable([[1, 2], [2, 3]]))
        groups = defaultdict(list)
        for key, value in zip("abab", range(4)):
            groups[key].append(value)
        pairs = {k: v for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))}
        first, *rest = applied
        p = Point(1, 2)
        with np.errstate(all="ignore"):
            ratio = float(np.float64(1.0) / np.float64(3.0))
        try:
            raise LabelError("x")
        except LabelError as exc:
            caught = str(exc)
        text = re.sub(r"[aeiou]", lambda m: m.group(0).upper(), "template")
        squares = [cached_square(k) for k in range(4)]
        delta = applied[-1] - first
        answer = Describer.direction(delta)
        options = ["up", "down", "flat"]
        items.append({
            "question": f"Record {record_id}: rising, falling or flat? (mean {d.mean:.2f}, {text})",
            "options": options, "answer_index": options.index(answer),
            "series": [{"name": "v", "values": [float(x) for x in weekly]}],
            "metadata": {"agg": {k: {kk: float(vv) for kk, vv in v.items()} for k, v in agg.items()},
                         "named": {str(k): float(v) for k, v in named["total"].items()}, "resampled": resampled,
                         "mapped": mapped, "piped": float(piped), "counts": {str(k): v for k, v in counts.items()}, "pairs": pairs,
                         "rest": len(rest), "point": [p.x, p.y], "ratio": ratio, "caught": caught,
                         "squares": squares, "scaled": Describer.scaled(3), "mean": summarize(1.0, 2.0, digits=1),
                         "rand": r.random(), "r2": random.Random(7).randint(1, 100)},
        })
    return items
'''


def test_ordinary_deterministic_template_passes_the_policy() -> None:
    first = run_here(ORDINARY_TEMPLATE, num_samples=3)
    assert first["status"] == "ok", first
    assert run_here(ORDINARY_TEMPLATE, num_samples=3) == first
    meta = first["items"][0]["metadata"]
    assert meta["mapped"] == ["alpha", "beta", "alpha"] and meta["caught"] == "x" and meta["squares"] == [0, 1, 4, 9]
    assert meta["scaled"] == 6 and meta["mean"] == 1.5 and meta["point"] == [1, 2]


def test_seeded_stdlib_random_is_allowed_and_unseeded_is_derived_from_the_run() -> None:
    source = ("import random\n"
              "def question(n):\n"
              "    a, b = random.Random(42), random.Random(42)\n"
              "    c, d = random.Random(), random.Random()\n"
              "    return [{'question': 'q', 'options': ['a', 'b'], 'answer_index': 0,\n"
              "             'metadata': {'same': a.random() == b.random(), 'c': c.random(), 'd': d.random(),\n"
              "                          'isinstance': isinstance(a, random.Random)}}]\n")
    first, second = run_here(source), run_here(source)
    assert first["status"] == "ok", first
    meta = first["items"][0]["metadata"]
    assert meta["same"] is True and meta["isinstance"] is True and meta["c"] != meta["d"]
    assert second == first  # unseeded generators are seeded from the run's seed
    import random
    assert meta["c"] != random.Random(0).random()
    refused = run_here("import random\ndef question(n):\n    random.Random(1).seed()\n    return []\n")
    assert refused["status"] == "error" and "explicit seed" in refused["error"]
    internals = run_here("import random\ndef question(n):\n    return [random.Random(1).getstate()]\n")
    assert internals["status"] == "error"
