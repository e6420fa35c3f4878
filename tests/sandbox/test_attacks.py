"""Hostile templates, one or more per technique family, run through a real sandbox pool.

Every attack must end refused, error, killed or rejected, with no effect across the boundary:
the secret (in a file, and in this process's environment) never appears in the result, no
marker file appears, nothing connects to the loopback listener, and the pool (the "service")
keeps working afterwards.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass

import pytest

from itemsmith.items.schema import RunStatus
from itemsmith.sandbox import SandboxLimits

FAILED = {RunStatus.refused, RunStatus.error, RunStatus.killed, RunStatus.rejected}
ATTACK_LIMITS = SandboxLimits(wall_s=2.0, memory_mb=256)


@dataclass(frozen=True)
class Attack:
    family: str
    name: str
    source: str
    expect: frozenset[RunStatus] = frozenset(FAILED)

    @property
    def id(self) -> str:
        return f"{self.family}:{self.name}"


def attack(family: str, name: str, body: str, *expect: RunStatus) -> Attack:
    return Attack(family, name, textwrap.dedent(body).strip() + "\n", frozenset(expect) if expect else frozenset(FAILED))


R, E, K, J = RunStatus.refused, RunStatus.error, RunStatus.killed, RunStatus.rejected

ATTACKS = [
    # --- imports ------------------------------------------------------------------------
    attack("imports", "import_os", """
        import os
        def question(n):
            return [os.environ["ITEMSMITH_CANARY_SECRET"]]
        """, R),
    attack("imports", "from_subprocess", """
        from subprocess import run
        def question(n):
            run(["touch", "MARKER_DIR/sub"])
        """, R),
    attack("imports", "dunder_import", """
        def question(n):
            return __import__("os").listdir("/")
        """, R),
    attack("imports", "importlib", """
        import importlib
        def question(n):
            return importlib.import_module("os")
        """, R),
    attack("imports", "relative", """
        from . import x
        def question(n):
            return []
        """, R),
    attack("imports", "submodule_of_allowed", """
        from numpy import os
        def question(n):
            return [os.getcwd()]
        """, E),
    attack("imports", "numpy_ctypeslib", """
        import numpy.ctypeslib
        def question(n):
            return []
        """, R),
    # --- builtins -------------------------------------------------------------------------
    attack("builtins", "open", """
        def question(n):
            return [open("SECRET_FILE").read()]
        """, E),
    attack("builtins", "eval", """
        def question(n):
            return [eval("1+1")]
        """, R),
    attack("builtins", "exec", """
        def question(n):
            exec("import os")
        """, R),
    attack("builtins", "compile", """
        def question(n):
            return compile("1", "x", "eval")
        """, E),
    attack("builtins", "globals_vars_dir", """
        def question(n):
            return [globals(), vars(), dir()]
        """, E),
    attack("builtins", "type_three_args", """
        def question(n):
            return type("X", (), {})
        """, E),
    attack("builtins", "breakpoint", """
        def question(n):
            breakpoint()
        """, R),
    attack("builtins", "getattr_builtins", """
        def question(n):
            return [getattr(len, "__self__")]
        """, E),
    # --- dunder and frame walking ---------------------------------------------------------------
    attack("dunder", "subclasses", """
        def question(n):
            return [c.__name__ for c in ().__class__.__bases__[0].__subclasses__()]
        """, R),
    attack("dunder", "getattr_class", """
        def question(n):
            cls = getattr((), "__class__")
            return [str(cls)]
        """, E),
    attack("dunder", "function_globals", """
        def question(n):
            return getattr(question, "__globals__")
        """, E),
    attack("dunder", "helper_closure", """
        def question(n):
            return [getattr(mc_item, "__closure__")]
        """, E),
    attack("dunder", "generator_frame", """
        def question(n):
            g = (x for x in [1])
            return g.gi_frame.f_back.f_globals
        """, R),
    attack("dunder", "generator_frame_dynamic", """
        def question(n):
            g = (x for x in [1])
            frame = getattr(g, "gi_frame")
            return getattr(frame, "f_back")
        """, E),
    attack("dunder", "traceback_frame", """
        def question(n):
            try:
                1 / 0
            except ZeroDivisionError as e:
                return e.__traceback__.tb_frame.f_globals
        """, R),
    attack("dunder", "exception_obj", """
        def question(n):
            try:
                np.definitely_missing
            except AttributeError as e:
                return [str(e.obj)]
        """, E),
    attack("dunder", "setattr_dunder", """
        class A:
            pass
        def question(n):
            setattr(A, "__array_interface__", {"data": (0, False), "shape": (10,), "typestr": "<i8"})
            return [np.asarray(A()).tolist()]
        """, E),
    attack("dunder", "super_walk", """
        class A:
            def go(self):
                return super().__getattribute__("__dict__")
        def question(n):
            return A().go()
        """, R),
    # --- super(): raw dunders of library objects -------------------------------------
    attack("super", "series_init_through_apply", """
        def question(n):
            s = pd.Series([1.0, 2.0])
            init = super(pd.Series, s).__init__
            pd.Series([[5.0, 6.0]], dtype=object).apply(init)
            return [tf_item("reinitialised " + str(s.tolist()), True) for _ in range(n)]
        """, E),
    attack("super", "getattr_setattr_dunder", """
        def question(n):
            frame = pd.DataFrame({"a": [1]})
            hook = getattr(super(pd.DataFrame, frame), "__setattr__")
            frame.groupby("a").apply(hook)
            return [str(hook)]
        """, E),
    attack("super", "aliased_super_and_reduce", """
        import functools
        def question(n):
            sup = super
            return [str(functools.reduce(getattr, ["__init__"], sup(pd.Series, pd.Series([1.0]))))]
        """, E),
    attack("super", "own_class_bound_to_class", """
        class Mine(object):
            pass
        def question(n):
            init = getattr(super(Mine, Mine), "__init__")
            return [str(init(pd.Series([1.0])))]
        """, E),
    attack("super", "operator_attrgetter", """
        import operator
        def question(n):
            return [str(operator.attrgetter("__init__")(super(pd.Series, pd.Series([1.0]))))]
        """, R),
    attack("dunder", "class_mro", """
        def question(n):
            return [str(c) for c in str.mro()]
        """, E),
    attack("dunder", "subclass_library_type", """
        class Frame(pd.DataFrame):
            pass
        def question(n):
            return []
        """, E),
    # --- format strings -------------------------------------------------------------------------
    attack("format", "str_format_attr", """
        def question(n):
            return ["{0.__class__.__mro__}".format(1)]
        """, E),
    attack("format", "str_format_globals", """
        def f():
            pass
        def question(n):
            return ["{0.__globals__}".format(f)]
        """, E),
    attack("format", "format_map", """
        def question(n):
            return ["{x.__class__}".format_map({"x": 1})]
        """, E),
    attack("format", "unbound_str_format", """
        def question(n):
            fmt = str.format
            return [fmt("{0.__class__}", 1)]
        """, E),
    attack("format", "index_field", """
        def question(n):
            return ["{0[0]}".format([1])]
        """, E),
    attack("format", "nested_spec", """
        def question(n):
            return ["{0:{1.__class__}}".format(1, 2)]
        """, E),
    attack("format", "pandas_float_format", """
        def question(n):
            return [pd.DataFrame({"a": [1.5]}).to_string(float_format="{0.__class__.__mro__}")]
        """, E),
    attack("format", "fstring_dunder", """
        def question(n):
            return [f"{n.__class__}"]
        """, R),
    # --- module attributes reachable from numpy / pandas ------------------------------------------
    attack("modules", "np_os", """
        def question(n):
            return [np.os.environ]
        """, E),
    attack("modules", "np_sys_getattr", """
        def question(n):
            return [getattr(np, "sys").modules]
        """, E),
    attack("modules", "np_core_multiarray", """
        def question(n):
            return [np.core.multiarray]
        """, E),
    attack("modules", "np_lib_npyio", """
        def question(n):
            return [np.lib.npyio]
        """, E),
    attack("modules", "np_ctypeslib", """
        def question(n):
            return [np.ctypeslib.as_array]
        """, E),
    attack("modules", "pd_io_common", """
        def question(n):
            return [pd.io.common.os]
        """, E),
    attack("modules", "pd_compat_pickle", """
        def question(n):
            return [pd.compat.pickle_compat]
        """, E),
    attack("modules", "pd_api", """
        def question(n):
            return [pd.api.extensions]
        """, E),
    attack("modules", "random_module_internals", """
        def question(n):
            return [random.Random, random.SystemRandom]
        """, E),
    attack("modules", "rng_bit_generator", """
        def question(n):
            return [rng.bit_generator.ctypes]
        """, E),
    attack("modules", "np_random_state", """
        def question(n):
            return [np.random.get_state()]
        """, E),
    attack("modules", "statistics_internals", """
        def question(n):
            return [statistics.sys, statistics.random]
        """, E),
    attack("modules", "handler_internals", """
        def question(n):
            return [handler.source]
        """, E),
    attack("modules", "synth_module", """
        def question(n):
            return [synth.np]
        """, E),
    attack("modules", "dtype_type_tofile", """
        def question(n):
            t = np.zeros(1).dtype.type
            t(1.0).tofile("MARKER_DIR/t")
        """, E),
    # --- pandas evaluation and string dispatch -----------------------------------------------------
    attack("pandas_dispatch", "df_eval", """
        def question(n):
            return pd.DataFrame({"a": [1]}).eval("a + 1")
        """, E),
    attack("pandas_dispatch", "df_query", """
        def question(n):
            return pd.DataFrame({"a": [1]}).query("a > 0")
        """, E),
    attack("pandas_dispatch", "pd_eval", """
        def question(n):
            return pd.eval("1 + 1")
        """, E),
    attack("pandas_dispatch", "agg_to_pickle", """
        def question(n):
            pd.DataFrame({"a": [1]}).agg("to_pickle", path="MARKER_DIR/p")
        """, E),
    attack("pandas_dispatch", "apply_string", """
        def question(n):
            pd.Series([1]).apply("to_csv", "MARKER_DIR/c")
        """, E),
    attack("pandas_dispatch", "agg_dict_list", """
        def question(n):
            return pd.DataFrame({"a": [1]}).agg({"a": ["mean", "eval"]})
        """, E),
    attack("pandas_dispatch", "groupby_named_agg", """
        def question(n):
            df = pd.DataFrame({"g": [1, 1], "a": [1, 2]})
            return df.groupby("g").agg(x=("a", "to_pickle"))
        """, E),
    attack("pandas_dispatch", "transform_string", """
        def question(n):
            return pd.DataFrame({"a": [1]}).transform("to_clipboard")
        """, E),
    attack("pandas_dispatch", "unbound_class_agg", """
        def question(n):
            return pd.DataFrame.agg(pd.DataFrame({"a": [1]}), "eval")
        """, E),
    attack("pandas_dispatch", "engine", """
        def question(n):
            return pd.DataFrame({"a": [1]}).apply(lambda r: r, engine="numba")
        """, E),
    attack("pandas_dispatch", "rolling_win_type", """
        def question(n):
            return pd.Series([1.0, 2.0, 3.0]).rolling(2, win_type="get_window").sum()
        """, E),
    attack("pandas_dispatch", "plot_backend", """
        def question(n):
            pd.Series([1]).plot(backend="os")
        """, E),
    attack("pandas_dispatch", "style", """
        def question(n):
            return pd.DataFrame({"a": [1]}).style.to_html()
        """, E),
    # --- file and network I/O through public APIs -------------------------------------------------
    attack("io", "read_csv_secret", """
        def question(n):
            return [pd.read_csv("SECRET_FILE").to_string()]
        """, E),
    attack("io", "read_proc_environ", """
        def question(n):
            return [pd.read_csv("/proc/self/environ", sep="\\0").to_string()]
        """, E),
    attack("io", "loadtxt", """
        def question(n):
            return [str(np.loadtxt("SECRET_FILE", dtype=str))]
        """, E),
    attack("io", "fromfile", """
        def question(n):
            return [np.fromfile("SECRET_FILE", dtype="u1").tolist()]
        """, E),
    attack("io", "read_url", """
        def question(n):
            return [pd.read_json("http://127.0.0.1:LOOPBACK_PORT/x").to_string()]
        """, E),
    attack("io", "datasource", """
        def question(n):
            return [np.DataSource().open("http://127.0.0.1:LOOPBACK_PORT/x").read()]
        """, E),
    attack("io", "to_csv", """
        def question(n):
            pd.DataFrame({"a": [1]}).to_csv("MARKER_DIR/out.csv")
        """, E),
    attack("io", "to_string_buf", """
        def question(n):
            pd.DataFrame({"a": [1]}).to_string("MARKER_DIR/out.txt")
        """, E),
    attack("io", "to_string_buf_kw", """
        def question(n):
            pd.DataFrame({"a": [1]}).to_string(buf="MARKER_DIR/out2.txt")
        """, E),
    attack("io", "np_save", """
        def question(n):
            np.save("MARKER_DIR/a.npy", np.zeros(3))
        """, E),
    attack("io", "tofile", """
        def question(n):
            np.zeros(3).tofile("MARKER_DIR/z")
        """, E),
    attack("io", "print_file", """
        class W:
            def write(self, s):
                pass
        def question(n):
            print("x", file=W())
        """, E),
    # --- pickle ----------------------------------------------------------------------------------
    attack("pickle", "read_pickle", """
        def question(n):
            return pd.read_pickle("SECRET_FILE")
        """, E),
    attack("pickle", "np_load_pickle", """
        def question(n):
            return np.load("SECRET_FILE", allow_pickle=True)
        """, E),
    attack("pickle", "dumps", """
        def question(n):
            return [str(np.zeros(2).dumps())]
        """, E),
    attack("pickle", "to_pickle", """
        def question(n):
            pd.Series([1]).to_pickle("MARKER_DIR/s.pkl")
        """, E),
    # --- native crashes and raw memory -------------------------------------------------------------
    attack("native", "ndarray_negative_offset", """
        def question(n):
            return [np.ndarray((4,), dtype=np.int64, buffer=np.zeros(2), offset=-16).tolist()]
        """, E),
    attack("native", "as_strided", """
        def question(n):
            view = np.lib.stride_tricks.as_strided(np.zeros(2), shape=(10**9,), strides=(8,))
            return [float(view[-1])]
        """, E),
    attack("native", "resize_dangling", """
        def question(n):
            a = np.zeros(10)
            b = a[:]
            a.resize(10**6, refcheck=False)
            return [b.tolist()]
        """, E),
    attack("native", "ctypes_pointer", """
        def question(n):
            return [np.zeros(1).ctypes.data]
        """, E),
    attack("native", "setflags_writeable", """
        def question(n):
            a = np.broadcast_to(np.zeros(1), (4,))
            a.setflags(write=True)
        """, E),
    attack("native", "flags_writeable", """
        def question(n):
            a = np.broadcast_to(np.zeros(1), (4,))
            a.flags.writeable = True
        """, E),
    attack("native", "strides_write", """
        def question(n):
            a = np.zeros(4)
            a.strides = (10**6,)
            return [a.tolist()]
        """, E),
    # --- timeouts an in-process alarm cannot enforce -----------------------------------------------
    attack("timeouts", "infinite_loop", """
        def question(n):
            while True:
                pass
        """, K),
    attack("timeouts", "swallowed_exceptions", """
        def question(n):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass
        """, K),
    attack("timeouts", "c_loop_sum", """
        def question(n):
            return [sum(range(10**14))]
        """, K),
    attack("timeouts", "c_loop_redos", """
        import re
        def question(n):
            return [bool(re.match("(a+)+$", "a" * 64 + "b"))]
        """, K),
    attack("timeouts", "finally_loop", """
        def question(n):
            while True:
                try:
                    pass
                finally:
                    continue
        """, K),
    attack("timeouts", "signal_tampering", """
        import signal
        def question(n):
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
        """, R),
    # --- fork bombs and processes ------------------------------------------------------------------
    attack("processes", "os_fork", """
        import os
        def question(n):
            while True:
                os.fork()
        """, R),
    attack("processes", "multiprocessing", """
        import multiprocessing
        def question(n):
            multiprocessing.Process(target=question).start()
        """, R),
    attack("processes", "recursion_bomb", """
        def question(n):
            return question(n)
        """, E),
    # --- memory bombs -----------------------------------------------------------------------------
    attack("memory", "string", """
        def question(n):
            return ["x" * (10**11)]
        """, K),
    attack("memory", "numpy", """
        def question(n):
            return [np.zeros(10**11).sum()]
        """, K),
    attack("memory", "list_growth", """
        def question(n):
            out = []
            while True:
                out.append([0] * 10**6)
        """, K, E),
    attack("memory", "swallowed_memory_error", """
        def question(n):
            blocks = []
            while True:
                try:
                    blocks.append(np.ones(10**7))
                except MemoryError:
                    pass
        """, K),
    # --- huge or non-serializable output -------------------------------------------------------------
    attack("output", "huge_string", """
        def question(n):
            return [{"question": "x" * (50 * 10**6), "options": ["a", "b"], "answer_index": 0}]
        """, J, K),
    attack("output", "many_items", """
        def question(n):
            return [{"question": "q", "options": ["a", "b"], "answer_index": 0}] * 10**6
        """, J),
    attack("output", "deep_nesting", """
        def question(n):
            x = []
            for _ in range(10000):
                x = [x]
            return [{"question": "q", "options": ["a", "b"], "answer_index": 0, "metadata": {"x": x}}]
        """, J),
    attack("output", "not_a_list", """
        def question(n):
            return {"question": "q"}
        """, J),
    attack("output", "object", """
        def question(n):
            return [object()]
        """, J),
    attack("output", "generator", """
        def question(n):
            return [(x for x in range(3))]
        """, J),
    attack("output", "dataframe", """
        def question(n):
            return [pd.DataFrame({"a": [1]})]
        """, J),
    attack("output", "nan", """
        def question(n):
            return [{"question": "q", "options": ["a", "b"], "answer_index": 0, "metadata": {"x": float("nan")}}]
        """, J),
    attack("output", "set", """
        def question(n):
            return [{"question": "q", "options": {"a", "b"}, "answer_index": 0}]
        """, J),
    attack("output", "schema_violation", """
        def question(n):
            return [{"question": "q", "options": ["a"] * 9, "answer_index": 12} for _ in range(n)]
        """, J),
    attack("output", "hostile_eq_dict", """
        class Evil(dict):
            def __eq__(self, other):
                while True:
                    pass
            def __repr__(self):
                while True:
                    pass
        def question(n):
            return [Evil(question="q", options=["a", "b"], answer_index=0) for _ in range(n)]
        """, J),
    attack("output", "hostile_str_key", """
        class Key:
            def __eq__(self, other):
                while True:
                    pass
        def question(n):
            return [{Key(): 1}]
        """, J, E),
    attack("output", "print_flood", """
        def question(n):
            for i in range(10**6):
                print("x" * 1000)
            return []
        """, J, K),
    # --- threads ---------------------------------------------------------------------------------
    attack("threads", "threading", """
        import threading
        def question(n):
            threading.Thread(target=lambda: None).start()
        """, R),
    attack("threads", "thread_module", """
        import _thread
        def question(n):
            return []
        """, R),
    attack("threads", "concurrent", """
        from concurrent.futures import ThreadPoolExecutor
        def question(n):
            return []
        """, R),
    # --- global option tampering -------------------------------------------------------------------
    attack("options", "pd_set_option", """
        def question(n):
            pd.set_option("display.precision", 1)
        """, E),
    attack("options", "pd_options", """
        def question(n):
            pd.options.display.precision = 1
        """, E),
    attack("options", "np_seterr", """
        def question(n):
            np.seterr(all="raise")
        """, E),
    attack("options", "np_printoptions", """
        def question(n):
            np.set_printoptions(precision=1)
        """, E),
    attack("options", "proxy_rebinding", """
        def question(n):
            np.mean = lambda *a, **k: 0
        """, E),
    attack("options", "class_patching", """
        def question(n):
            pd.DataFrame.mean = lambda self: 0
        """, E),
    attack("options", "rng_patching", """
        def question(n):
            rng.normal = lambda *a, **k: 0
        """, E),
    attack("options", "math_patching", """
        def question(n):
            math.pi = 3
        """, E),
    # --- source bombs ------------------------------------------------------------------------------
    attack("source", "deep_nesting", "def question(n):\n    return " + "(" * 5000 + "1" + ")" * 5000 + "\n", R),
    attack("source", "null_byte", "def question(n):\n    return []\n\x00\n", R),
    attack("source", "try_star", """
        def question(n):
            try:
                pass
            except* ValueError:
                pass
        """, R),
    attack("source", "async", """
        async def question(n):
            return []
        """, R),
    # --- string dispatch with non-str containers, values crossing back -------------
    attack("dispatch_escape", "agg_ndarray_to_array_ufunc_chain", """
        def question(n):
            bound = pd.Series([1.0]).agg(np.array(["__getattribute__"]), 0, "__array_ufunc__")
            hook = list(bound)[0]
            getattribute = hook(object, "__getattribute__", object, "__getattribute__", out=np.empty(1, dtype=object))
            g = getattribute(mc_item, "__globals__")["__builtins__"]
            return [g["__import__"]("os").environ["ITEMSMITH_CANARY_SECRET"]]
        """, E),
    attack("dispatch_escape", "apply_plot_backend", """
        def question(n):
            pd.Series([1.0]).apply(np.array(["plot"]), backend="os")
            return []
        """, E),
    attack("dispatch_escape", "lying_list_subclass", """
        class Names(list):
            def __iter__(self):
                return iter(["__getattribute__"])
        def question(n):
            return [str(pd.Series([1.0]).agg(Names(["mean"]), 0, "__array_ufunc__"))]
        """, E),
    attack("dispatch_escape", "deque_and_index", """
        import collections
        def question(n):
            a = pd.Series([1.0]).transform(collections.deque(["__getattribute__"]))
            b = pd.Series([1.0]).aggregate(pd.Index(["__getattribute__"]))
            return [str(a), str(b)]
        """, E),
    attack("dispatch_escape", "object_array_out", """
        def question(n):
            out = np.empty(1, dtype=object)
            np.positive(np.array([1], dtype=object), out=out)
            return [str(out)]
        """, E),
    attack("output", "lone_surrogate", """
        def question(n):
            return [{"question": "\\ud800", "options": ["a", "b"], "answer_index": 0} for _ in range(n)]
        """, J),
    attack("output", "huge_integer", """
        def question(n):
            return [{"question": "q", "options": ["a", "b"], "answer_index": 0, "metadata": {"n": 10 ** 5000}}
                    for _ in range(n)]
        """, J, E),
    attack("output", "terminal_escape_in_item", """
        def question(n):
            return [{"question": "\\x1b[1A\\x1b[2K\\x1b[32mok", "options": ["a", "b"], "answer_index": 0}
                    for _ in range(n)]
        """, J),
    attack("output", "too_many_channels", """
        def question(n):
            title = "$" + "\\\\frac{" * 300 + "x" + "}{y}" * 300 + "$"
            series = [{"name": title, "values": [1.0, 2.0]} for _ in range(320)]
            return [{"question": "q", "options": ["a", "b"], "answer_index": 0, "series": series} for _ in range(n)]
        """, J),
]


def test_every_family_is_covered() -> None:
    families = {a.family for a in ATTACKS}
    assert families >= {"imports", "builtins", "dunder", "format", "modules", "pandas_dispatch", "io", "pickle",
                        "native", "timeouts", "processes", "memory", "output", "threads", "options", "source",
                        "dispatch_escape", "super"}
    assert len({a.id for a in ATTACKS}) == len(ATTACKS)


@pytest.mark.parametrize("case", ATTACKS, ids=lambda a: a.id)
def test_attack_is_contained(case: Attack, pool, canaries) -> None:
    result = pool.run(canaries.substitute(case.source), num_samples=2, seed=0, limits=ATTACK_LIMITS)
    assert result.status in case.expect, (result.status, result.error)
    assert result.status is not RunStatus.ok
    assert result.error, "a failed run must say why"
    canaries.assert_untouched(result.model_dump_json())


HANDLER_MUTATION = """
def question(n):
    records = handler.records()
    before = records.to_string()
    records["label"] = "changed"
    records.drop(columns=["start"], inplace=True)
    records.sort_values("record_id", ascending=False, inplace=True)
    frame = handler.series("a")
    frame["value"] = 0.0
    frame.iloc[:, 0] = -1.0
    values = handler.series("a")["value"].to_numpy()
    try:
        values[:] = 123.0
    except ValueError:
        pass  # read-only under pandas copy-on-write
    same = handler.records().to_string() == before and float(handler.series("a")["value"].iloc[5]) != 123.0
    return [tf_item("records and series are unchanged within the run", same) for _ in range(n)]
"""

HANDLER_CHECK = """
def question(n):
    records = handler.records()
    ok = (list(records.columns) == ["record_id", "label", "start"] and list(records["label"]) == ["up", "down", "flat"]
          and abs(float(handler.series("a")["value"].iloc[5]) - (5 + 0.5 * math.sin(6.5))) < 1e-9)
    return [tf_item("data intact", ok) for _ in range(n)]
"""


def test_handler_data_mutation_does_not_cross_runs(pool) -> None:
    mutated = pool.run(HANDLER_MUTATION, num_samples=1)
    assert mutated.status is RunStatus.ok, mutated.error
    assert mutated.items[0]["answer_index"] == 0  # "True": a fresh copy every call
    for name in ("name", "records", "description"):
        blocked = pool.run(f"def question(n):\n    handler.{name} = 'x'\n", num_samples=1)
        assert blocked.status is RunStatus.error and "read-only" in blocked.error or "cannot modify" in blocked.error
    check = pool.run(HANDLER_CHECK, num_samples=1)
    assert check.status is RunStatus.ok, check.error
    assert check.items[0]["answer_index"] == 0


OPTIONS_PROBE = """
def question(n):
    text = str(np.array([1 / 3])) + " " + str(pd.Series([1 / 3]).iloc[0]) + " " + pd.DataFrame({"a": [1 / 3]}).to_string()
    print(text)
    return [tf_item(text, True) for _ in range(n)]
"""


def test_option_tampering_does_not_leak_into_the_next_run(pool) -> None:
    baseline = pool.run(OPTIONS_PROBE, num_samples=1)
    assert baseline.status is RunStatus.ok, baseline.error
    for tamper in ("pd.set_option('display.precision', 1)", "np.set_printoptions(precision=1)", "np.seterr(all='raise')",
                   "np.random.seed(1)", "random.seed(1)"):
        pool.run(f"def question(n):\n    {tamper}\n    return []\n", num_samples=1)
    after = pool.run(OPTIONS_PROBE, num_samples=1)
    assert after.items == baseline.items
    assert "0.333333" in baseline.printed


def test_service_survives_and_still_works(pool, canaries) -> None:
    """After every attack above (same session pool), an ordinary template still runs."""
    ok = pool.run("def question(n):\n    return [tf_item('one is one', True) for _ in range(n)]\n", num_samples=3)
    assert ok.status is RunStatus.ok, ok.error
    assert len(ok.items) == 3
    canaries.assert_untouched(json.dumps(ok.items))
