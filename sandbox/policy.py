"""Policy layer: RestrictedPython compilation plus the guards a template's code runs under.

`compile_template` refuses, before anything runs, source that names anything starting with
"_" (dunders, frames, `__import__`), imports a module outside the allow-list, uses `exec`/
`eval`, async code, `try/except*`, or other constructs RestrictedPython rejects. At run time
every attribute read goes through `guarded_getattr`, every subscript through
`guarded_getitem` and every assignment through `guarded_write`; `build_namespace` assembles
the only names a template can see.

This layer narrows what ordinary Python can reach; it is not the security boundary on its
own (numpy and pandas are large C libraries). The process isolation in
`sandbox.isolation` is what contains whatever gets past it.
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import operator
import statistics
import types
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from RestrictedPython import compile_restricted_exec
from RestrictedPython.Guards import (
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
)
from RestrictedPython.transformer import (
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
    copy_locations,
)

from itemsmith.sandbox import clock, dispatch, proxies
from itemsmith.sandbox.handler_data import HandlerView

TEMPLATE_FILENAME = "<template>"

# --- compile time ------------------------------------------------------------------------

# Magic methods a template's own classes may define, beyond RestrictedPython's
# (__init__, __contains__ and the rich comparisons). Their bodies are restricted code too.
EXTRA_MAGIC_METHODS = frozenset({
    "__repr__", "__str__", "__len__", "__iter__", "__next__", "__getitem__", "__call__", "__bool__",
    "__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rsub__", "__rmul__", "__neg__",
})


class TemplateRefused(Exception):
    """The policy rejected the source before it ran; `errors` are short, line-numbered reasons."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


def _is_super_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
            and not node.keywords)


def _is_guarded_super_call(node: ast.AST) -> bool:
    """`super(...)` after the transformer: `super()` itself, or `_call_(super, cls, obj)`."""
    return _is_super_call(node) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_call_"
        and bool(node.args) and isinstance(node.args[0], ast.Name) and node.args[0].id == "super")


_COMPARE_OPS: dict[type, str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}


def _wrapped_in(guard: str, value: ast.expr) -> ast.expr:
    call = ast.Call(func=ast.Name(guard, ast.Load()), args=[value], keywords=[])
    copy_locations(call, value)
    ast.fix_missing_locations(call)
    return call


def _as_expression(node: ast.expr) -> ast.expr:
    """A subscript key as a plain expression (`a[1:2]`'s Slice becomes `slice(1, 2, None)`)."""
    if isinstance(node, ast.Slice):
        parts = [p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)]
        call = ast.Call(func=ast.Name("slice", ast.Load()), args=parts, keywords=[])
        copy_locations(call, node)
        return call
    if isinstance(node, ast.Tuple):
        node.elts = [_as_expression(e) for e in node.elts]
    return node


class TemplateTransformer(RestrictingNodeTransformer):
    """RestrictedPython's transformer, extended for ordinary template code.

    - `obj.n += 1` and `d[k] += 1` become guarded read-modify-write calls instead of errors;
    - `super().__init__(...)` is allowed (and only that dunder, only on `super()`);
    - a few more magic methods may be defined in a template's classes;
    - imports are checked against the allow-list at compile time.
    """

    def check_name(self, node: Any, name: str | None, allow_magic_methods: bool = False) -> None:
        if name == "super" and not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            self.error(node, '"super" cannot be rebound in templates')
            return
        if (allow_magic_methods and name in EXTRA_MAGIC_METHODS and getattr(node, "col_offset", 0) != 0):
            return
        super().check_name(node, name, allow_magic_methods)

    def visit_Call(self, node: Any) -> Any:
        """Every call goes through `_call_` (callee checked, result checked), except the
        generated print collector, `super()` (it reads its caller's frame) and
        `super().__init__(...)`."""
        node = super().visit_Call(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id == "_apply_":
            func.id = "_call_"
            return node
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "_print":
            return node
        if _is_super_call(node) and not node.args:
            return node
        if (isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "_getattr_"
                and _is_guarded_super_call(func.args[0])):
            return node  # `_getattr_` let `__init__` through only for the template's own objects
        new = ast.Call(func=ast.Name("_call_", ast.Load()), args=[func, *node.args], keywords=node.keywords)
        copy_locations(new, node)
        return new

    def _guard_parameters(self, args: ast.arguments) -> ast.expr | None:
        """`_guard_args_((a, b), args, kwargs)` for a function's parameters, or None."""
        names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if not names and args.vararg is None and args.kwarg is None:
            return None
        def load(name: str | None) -> ast.expr:
            return ast.Name(name, ast.Load()) if name else ast.Constant(None)
        return ast.Call(func=ast.Name("_guard_args_", ast.Load()),
                        args=[ast.Tuple([load(n) for n in names], ast.Load()),
                              load(args.vararg.arg if args.vararg else None),
                              load(args.kwarg.arg if args.kwarg else None)], keywords=[])

    def _guard_decorators(self, node: Any) -> None:
        wrapped = []
        for decorator in node.decorator_list:
            call = ast.Call(func=ast.Name("_decorator_", ast.Load()), args=[decorator], keywords=[])
            copy_locations(call, decorator)
            ast.fix_missing_locations(call)
            wrapped.append(call)
        node.decorator_list = wrapped

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scopes: list[str] = []  # "class" or "function", innermost last

    def _in_scope(self, kind: str, visit: Callable[[Any], Any], node: Any) -> Any:
        self.scopes.append(kind)
        try:
            return visit(node)
        finally:
            self.scopes.pop()

    def visit_FunctionDef(self, node: Any) -> Any:
        node = self._in_scope("function", super().visit_FunctionDef, node)
        guard = self._guard_parameters(node.args)
        if guard is not None:
            statement = ast.Expr(guard)
            first = node.body[0] if node.body else node
            copy_locations(statement, first)
            ast.fix_missing_locations(statement)
            docstring = (node.body and isinstance(node.body[0], ast.Expr)
                         and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str))
            node.body.insert(1 if docstring else 0, statement)
        self._guard_decorators(node)
        return node

    def visit_Return(self, node: Any) -> Any:
        """`return x` -> `return _returned_(x)` (checked when it may be going to numpy/pandas)."""
        node = super().visit_Return(node)
        if node.value is not None:
            node.value = _wrapped_in("_returned_", node.value)
        return node

    def visit_Yield(self, node: Any) -> Any:
        """`yield x` -> `yield _returned_(x)`: a generator of a template's runs while the library
        draws from it (`__iter__` written with `yield`)."""
        node = super().visit_Yield(node)
        if node.value is not None:
            node.value = _wrapped_in("_returned_", node.value)
        return node

    def visit_YieldFrom(self, node: Any) -> Any:
        node = super().visit_YieldFrom(node)
        node.value = _wrapped_in("_returned_", node.value)
        return node

    def visit_Compare(self, node: Any) -> Any:
        """`a < b` -> `_compare_(a, "<", b)`; a chain through `_compare_chain_`, whose later
        operands are evaluated lazily, once, as in Python."""
        node = super().visit_Compare(node)
        ops = [_COMPARE_OPS[type(op)] for op in node.ops]
        if ops in (["is"], ["is not"]):  # identity: nothing is parsed
            return node
        if len(ops) == 1:
            new = ast.Call(func=ast.Name("_compare_", ast.Load()),
                           args=[node.left, ast.Constant(ops[0]), node.comparators[0]], keywords=[])
        else:  # names and constants are passed as they are; other operands as thunks (lazy, once),
            # except in a class body, whose names a thunk could not see (there all are evaluated first)
            in_class = self.scopes[-1:] == ["class"]
            eager = [in_class or isinstance(c, (ast.Name, ast.Constant)) for c in node.comparators]
            operands = [c if now else ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                    kw_defaults=[], defaults=[]), body=c)
                        for c, now in zip(node.comparators, eager, strict=True)]
            new = ast.Call(func=ast.Name("_compare_chain_", ast.Load()),
                           args=[node.left, ast.Tuple([ast.Constant(op) for op in ops], ast.Load()),
                                 ast.Constant(tuple(eager)), *operands], keywords=[])
        copy_locations(new, node)
        ast.fix_missing_locations(new)
        return new

    def visit_Lambda(self, node: Any) -> Any:
        node = self._in_scope("function", super().visit_Lambda, node)
        node.body = _wrapped_in("_returned_", node.body)
        guard = self._guard_parameters(node.args)
        if guard is not None:
            body = ast.BoolOp(op=ast.Or(), values=[guard, node.body])
            copy_locations(body, node.body)
            ast.fix_missing_locations(body)
            node.body = body
        return node

    def visit_ClassDef(self, node: Any) -> Any:
        node = self._in_scope("class", super().visit_ClassDef, node)
        self._guard_decorators(node)
        return node

    def visit_With(self, node: Any) -> Any:
        node = super().visit_With(node)
        for item in node.items:
            target = item.optional_vars
            if isinstance(target, ast.Name):
                check = ast.Assign(targets=[ast.Name(target.id, ast.Store())],
                                   value=ast.Call(func=ast.Name("_guard_", ast.Load()),
                                                  args=[ast.Name(target.id, ast.Load())], keywords=[]))
                copy_locations(check, node)
                ast.fix_missing_locations(check)
                node.body.insert(0, check)
        return node

    def check_import_names(self, node: ast.ImportFrom | ast.Import) -> ast.AST:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                self.error(node, "relative imports are not allowed in templates")
            modules = [node.module or ""]
        else:
            modules = [alias.name for alias in node.names]
        for module in modules:
            if module not in proxies.ALLOWED_IMPORTS:
                allowed = ", ".join(sorted(m for m in proxies.ALLOWED_IMPORTS if "." not in m and m[0] != "_"))
                self.error(node, f'import of "{module}" is not allowed; templates can import only: {allowed}')
        return super().check_import_names(node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        if node.attr == "__init__" and isinstance(node.ctx, ast.Load) and _is_super_call(node.value):
            node = self.node_contents_visit(node)
            new = ast.Call(func=ast.Name("_getattr_", ast.Load()),
                           args=[node.value, ast.Constant("__init__")], keywords=[])
            copy_locations(new, node)
            return new
        return super().visit_Attribute(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        target = node.target
        if isinstance(target, ast.Name):
            return super().visit_AugAssign(node)
        op = IOPERATOR_TO_STR[type(node.op)]
        if isinstance(target, ast.Attribute):
            if target.attr.startswith("_") or target.attr in INSPECT_ATTRIBUTES:
                self.error(node, f'"{target.attr}" is an invalid attribute name because it starts with "_".')
                return node
            obj = self.visit(target.value)
            value = self.visit(node.value)
            call = ast.Call(func=ast.Name("_inplace_attr_", ast.Load()),
                            args=[obj, ast.Constant(target.attr), ast.Constant(op), value], keywords=[])
        elif isinstance(target, ast.Subscript):
            obj = self.visit(target.value)
            key = _as_expression(self.visit(target.slice))
            value = self.visit(node.value)
            call = ast.Call(func=ast.Name("_inplace_item_", ast.Load()),
                            args=[obj, key, ast.Constant(op), value], keywords=[])
        else:  # pragma: no cover - the grammar allows only the three target kinds
            self.error(node, "unsupported augmented assignment target")
            return node
        new = ast.Expr(value=call)
        copy_locations(call, node)
        copy_locations(new, node)
        return new


def compile_template(source: str, max_bytes: int | None = None) -> types.CodeType:
    """Compile template source under the policy, or raise `TemplateRefused`."""
    if type(source) is not str:
        raise TemplateRefused(["template source must be text"])
    if max_bytes is not None and len(source.encode("utf-8", "surrogatepass")) > max_bytes:
        raise TemplateRefused([f"template source is larger than {max_bytes} bytes"])
    try:
        result = compile_restricted_exec(source, filename=TEMPLATE_FILENAME, policy=TemplateTransformer)
    except (ValueError, RecursionError, MemoryError, SyntaxError) as exc:
        raise TemplateRefused([f"cannot compile the template: {type(exc).__name__}: {exc}"]) from None
    if result.errors or result.code is None:
        errors = list(result.errors) or ["the template did not compile"]
        raise TemplateRefused(errors[:5])
    return result.code


# --- attribute policy --------------------------------------------------------------------

# Names that are never reachable as attributes, on any object: file, network and pickle I/O,
# code evaluation, raw memory, plotting/styling backends that import modules by name,
# global option setters and introspection.
_IO_ATTRIBUTES = frozenset({
    "tofile", "dump", "dumps", "load", "loads", "save", "savez", "savez_compressed", "savetxt",
    "loadtxt", "fromfile", "genfromtxt", "memmap", "DataSource", "open", "fromregex",
})
_EVAL_ATTRIBUTES = frozenset({"eval", "query", "exec", "compile", "evaluate"})
_NATIVE_ATTRIBUTES = frozenset({"ctypes", "ctypeslib", "cffi", "setflags", "as_strided"})
_BACKEND_ATTRIBUTES = frozenset({"plot", "hist", "boxplot", "style"})
_OPTION_ATTRIBUTES = frozenset({
    "set_option", "reset_option", "get_option", "option_context", "options", "describe_option",
    "seterr", "seterrcall", "set_printoptions", "printoptions", "setbufsize", "set_string_function",
    "register_dataframe_accessor", "register_series_accessor", "register_index_accessor",
    "show_versions", "show_config", "get_include",
})
_INTROSPECTION_ATTRIBUTES = frozenset({"mro", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame",
                                       "tb_next"}) | INSPECT_ATTRIBUTES
# Wall-clock readers (datetime.now, date.today, pd.Timestamp.now, ...): an item keyed on them
# differs between runs of one seed, so checks on one run say nothing about the next.
_CLOCK_ATTRIBUTES = frozenset({"now", "today", "utcnow"})
# Names that are never reachable as attributes of library objects, with the reason given.
DENIAL_REASONS: dict[str, str] = {
    **dict.fromkeys(_IO_ATTRIBUTES, "file, network and pickle I/O is blocked"),
    **dict.fromkeys(_EVAL_ATTRIBUTES, "expression evaluation is blocked"),
    **dict.fromkeys(_NATIVE_ATTRIBUTES, "raw memory access is blocked"),
    **dict.fromkeys(_BACKEND_ATTRIBUTES, "plotting and styling backends are blocked"),
    **dict.fromkeys(_OPTION_ATTRIBUTES, "global options and registries cannot be changed"),
    **dict.fromkeys(_INTROSPECTION_ATTRIBUTES, "introspection is blocked"),
    **dict.fromkeys(_CLOCK_ATTRIBUTES, "the clock is not seeded: items must depend on the run's seed only"),
}
DENIED_ATTRIBUTES = frozenset(DENIAL_REASONS)
DENIED_PREFIXES = ("read_", "to_")
# to_* methods that compute in memory and never touch files.
ALLOWED_TO_METHODS = frozenset({
    "to_numpy", "to_list", "to_dict", "to_frame", "to_string", "to_period", "to_timestamp", "to_series",
    "to_pydatetime", "to_datetime64", "to_timedelta64", "to_flat_index", "to_records", "to_julian_date",
    "to_offset", "to_tuples", "to_pytimedelta",
})
# Attributes of numpy arrays and scalars that hand out raw memory or resize in place
# (ndarray.resize(refcheck=False) leaves other views dangling).
NUMPY_DENIED_ATTRIBUTES = frozenset({"data", "resize", "setfield", "getfield", "base", "flags"})
# Exact types whose instances expose only the listed attributes.
TYPE_RULES: dict[type, frozenset[str]] = {
    np.random.Generator: proxies.GENERATOR_METHODS,
    np.random.RandomState: proxies.RANDOMSTATE_METHODS,
    __import__("random").Random: proxies.PY_RANDOM_METHODS,
    proxies.TemplateRandom: proxies.PY_RANDOM_METHODS,
    functools.partial: frozenset(),
}
# Legacy numpy.random names LLMs reach for on a Generator.
GENERATOR_HINTS = {
    "randint": "use rng.integers(low, high)", "rand": "use rng.random(size)",
    "randn": "use rng.standard_normal(size)", "random_sample": "use rng.random(size)",
    "random_integers": "use rng.integers(low, high, endpoint=True)", "seed": "rng is already seeded by the run",
    "sample": "use rng.random(size) or rng.choice(seq, size, replace=False)",
}
DENIED_VALUE_TYPES = frozenset({
    types.ModuleType, types.FrameType, types.TracebackType, types.CodeType, types.CellType,
})
DENIED_VALUES = frozenset(id(v) for v in (
    builtins.open, builtins.eval, builtins.exec, builtins.compile, builtins.__import__, builtins.input,
    builtins.breakpoint, builtins.globals, builtins.locals, builtins.vars, builtins.dir, builtins.getattr,
    builtins.setattr, builtins.delattr, builtins.type, builtins.memoryview, builtins.help,
    np.ndarray, np.memmap, np.load, np.save, np.fromfile, np.lib.stride_tricks.as_strided,
))
DENIED_MODULES = frozenset({
    "os", "posix", "nt", "sys", "subprocess", "_posixsubprocess", "ctypes", "_ctypes", "pickle", "_pickle",
    "marshal", "io", "_io", "shutil", "socket", "_socket", "importlib", "_imp", "runpy", "code", "codeop",
    "pty", "signal", "_signal", "threading", "_thread", "multiprocessing", "gc", "inspect", "resource",
    "fcntl", "mmap", "tempfile", "pathlib", "webbrowser", "asyncio", "select", "selectors", "zipimport",
    "pydoc", "shelve", "dbm", "sqlite3", "_sqlite3", "tarfile", "zipfile", "glob", "faulthandler",
    "numpy.lib._npyio_impl", "numpy.lib.npyio", "pandas.io.pickle", "pandas.io.parsers.readers",
})
# AttributeError.obj (3.10+) hands out the object whose lookup failed, e.g. inside a library.
EXCEPTION_DENIED_ATTRIBUTES = frozenset({"obj"})
# Classes defined by templates (weakly held). Their instances, the module proxies and the
# handler view hold only what the template or the sandbox put there, so the library deny-list
# does not apply to them (`self.options`, `re.compile`, `handler.query`); "_" names and the
# value checks still do.
USER_CLASSES: weakref.WeakSet[type] = weakref.WeakSet()
_TRUSTED_NAMESPACES = (proxies.ModuleProxy, HandlerView)
_MISSING = object()


def _label(obj: Any) -> str:
    if isinstance(obj, proxies.ModuleProxy):
        return repr(obj).strip("<>")
    if isinstance(obj, type):
        return obj.__name__
    return type(obj).__name__


def _deny(obj: Any, name: str, why: str = "") -> AttributeError:
    reason = why or DENIAL_REASONS.get(name) or "file, network and pickle I/O is blocked"
    return AttributeError(f"{_label(obj)}.{name} is not available in templates ({reason})")


check_format_string = dispatch.check_format_string


def _safe_format(text: Any, method: str) -> Callable[..., str]:
    if isinstance(text, str):
        def bound(*args: Any, **kwargs: Any) -> str:
            check_format_string(text)
            return getattr(str, method)(text, *args, **kwargs)
        return bound

    def unbound(self: Any, *args: Any, **kwargs: Any) -> str:
        if not isinstance(self, str):
            raise TypeError(f"str.{method}() needs a str")
        check_format_string(self)
        return getattr(str, method)(self, *args, **kwargs)
    return unbound


def _is_pandas(obj: Any) -> int:
    """0: not pandas; 1: a pandas instance; 2: a pandas class (methods take self first)."""
    if isinstance(obj, type):
        return 2 if obj.__module__.startswith("pandas") else 0
    return 1 if type(obj).__module__.startswith("pandas") else 0


def _denied_callable(value: Any) -> bool:
    if id(value) in DENIED_VALUES:
        return True
    module = getattr(value, "__module__", None)
    return type(module) is str and module in DENIED_MODULES


_CALLABLE_TYPES = (types.BuiltinFunctionType, types.FunctionType, type, types.MethodType)


def _user_class_set(obj: Any) -> Any:
    """USER_CLASSES when `obj` is a class (hashing a class is by identity), else an empty tuple."""
    return USER_CLASSES if type(obj) is type else ()


# --- value guard -------------------------------------------------------------------------
#
# Every value that crosses from library code into template code is checked: attribute reads,
# subscripts, iteration, call results, arguments a library passes to a template's callback,
# `with ... as x`, decorators. A value is refused when it is a module, frame, traceback, code
# object or cell; a callable whose name starts with "_" (bound dunders such as
# `NDFrame.__array_ufunc__`, `object.__getattribute__`); a denied builtin or a function of a
# denied module; a raw pandas dispatcher (it is wrapped with its guard instead when it crosses
# alone); or a container, object-dtype array or pandas object holding any of those at any
# depth (iterative walk, no depth limit, exact base-type iteration so a lying `__iter__`/
# `values()` is never called). Values the template built from checked values stay checked;
# values library code computes are checked where they cross.

_INERT_TYPES = frozenset({
    int, float, str, bool, type(None), bytes, complex, slice, range, type(Ellipsis),
    np.float64, np.float32, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.bool_, np.str_, np.datetime64, np.timedelta64, np.complex128, np.complex64,
    pd.Timestamp, pd.Timedelta, pd.Period, type(pd.NaT), type(pd.NA),
})
_NAMED_CALLABLE_TYPES = frozenset({
    types.BuiltinFunctionType, types.FunctionType, types.MethodType, types.MethodWrapperType,
    types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType,
    types.GetSetDescriptorType, types.MemberDescriptorType, staticmethod, classmethod,
})
_SEQUENCE_TYPES: dict[type, Callable[[Any], Any]] = {list: list.__iter__, tuple: tuple.__iter__, set: set.__iter__, frozenset: frozenset.__iter__,
                   collections.deque: collections.deque.__iter__, type({}.keys()): type({}.keys()).__iter__,
                   type({}.values()): type({}.values()).__iter__, type({}.items()): type({}.items()).__iter__}
_SEQUENCE_BASES: tuple[type, ...] = tuple(_SEQUENCE_TYPES)
_MAPPING_TYPES = (dict,)  # dict subclasses: defaultdict, OrderedDict, Counter, a template's own
_PANDAS_FRAMES = (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)
# pandas' inferred kinds of an object array that cannot hold a callable.
_INERT_INFERRED = frozenset({
    "string", "bytes", "floating", "integer", "mixed-integer-float", "decimal", "complex", "boolean",
    "datetime64", "datetime", "date", "timedelta64", "timedelta", "time", "period", "interval", "empty",
})


class ValueRefused(TypeError):
    """A value crossing into template code that the policy does not allow."""


def _refuse(value: Any) -> ValueRefused:
    name = getattr(value, "__name__", None) if type(value) in _NAMED_CALLABLE_TYPES else None
    what = f"{type(value).__name__} {name!r}" if type(name) is str else type(value).__name__
    return ValueRefused(f"a value of type {what} is not available in templates "
                        "(internal functions, modules and frames are blocked)")


def _is_template_code(func: Any) -> bool:
    t = type(func)
    if t is types.MethodType:
        func = func.__func__
        t = type(func)
    return t is types.FunctionType and func.__code__.co_filename == TEMPLATE_FILENAME


def _raw_dispatcher(value: Any) -> tuple[str, int] | None:
    """(name, offset) when `value` is an unguarded pandas dispatch method, else None."""
    t = type(value)
    if t is types.MethodType:
        name = value.__name__
        if name in dispatch.GUARDED_METHODS and _is_pandas(value.__self__):
            return name, 0
    elif t is types.FunctionType:
        name = value.__name__
        module = value.__module__
        if name in dispatch.GUARDED_METHODS and type(module) is str and module.startswith("pandas"):
            return name, 1
    return None


def _scalar_refused(value: Any) -> bool:
    """A single value (not looking inside containers) the policy refuses."""
    t = type(value)
    if t in DENIED_VALUE_TYPES:
        return True
    if t in _NAMED_CALLABLE_TYPES:
        name = getattr(value, "__name__", "")
        if type(name) is not str or name[:1] == "_":
            return True
        if t is types.MethodType and type(value.__self__) in DENIED_VALUE_TYPES:
            return True
        return _denied_callable(value)
    if t is type:
        return _denied_callable(value)
    return False


def _object_array_items(value: Any) -> Any:
    """The elements of an object ndarray / pandas object to inspect, or None when the dtype
    (or pandas' C-level inference) shows it cannot hold a callable."""
    if type(value) is np.ndarray:
        dtype = value.dtype
        if not dtype.hasobject:
            return None
        if dtype.kind != "O":
            raise ValueRefused("structured arrays with object fields are not available in templates")
        array = value
    else:
        dtype = value.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            return _object_array_items(dtype.categories)
        if isinstance(dtype, pd.SparseDtype) and dtype.subtype == object:  # noqa: E721 - dtype equality
            return _object_array_items(np.asarray(value, dtype=object))
        if dtype != object:  # noqa: E721 - numpy dtype equality, not a type comparison
            return None
        array = value.to_numpy(dtype=object, copy=False)
    if array.size == 0 or pd.api.types.infer_dtype(array.ravel(), skipna=True) in _INERT_INFERRED:
        return None
    elements = array.ravel().tolist() if array.ndim else [array.item()]
    if any(map(callable, elements)):
        raise ValueRefused("object arrays and pandas objects holding functions are not available in templates")
    return elements


def check_deep(value: Any) -> Any:
    """Refuse `value` if it, or anything inside it at any depth, is refused (see above).

    Walks exact containers with their base type's own iteration (never a subclass's
    `__iter__`/`values()`), object-dtype arrays and pandas objects (values, index, columns,
    name); other objects are checked as single values. Returns `value`, or for a raw pandas
    dispatcher its guarded wrapper.
    """
    wrapped = _raw_dispatcher(value)
    if wrapped is not None:
        return dispatch.guard_method(value, *wrapped)
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        t = type(item)
        if t in _INERT_TYPES:
            continue
        if _scalar_refused(item) or _raw_dispatcher(item) is not None:
            raise _refuse(item)
        if t in _SEQUENCE_TYPES or isinstance(item, _SEQUENCE_BASES) or isinstance(item, _MAPPING_TYPES):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, _MAPPING_TYPES):
                for part in (dict.keys(item), dict.values(item)):
                    if not set(map(type, part)) <= _INERT_TYPES:
                        pending.extend(part)
                continue
            base = next(b for b in type(item).__mro__ if b in _SEQUENCE_TYPES)
            elements = list(_SEQUENCE_TYPES[base](item))
            if not set(map(type, elements)) <= _INERT_TYPES:
                pending.extend(elements)
        elif t is np.ndarray or isinstance(item, _PANDAS_FRAMES):
            if id(item) in seen:
                continue
            seen.add(id(item))
            elements = _object_array_items(item)
            if elements is not None:
                pending.extend(elements)
            if isinstance(item, pd.Series):
                pending.append(item.index)
                pending.append(item.name)
            elif isinstance(item, pd.Index):
                pending.extend(item.names)
        elif isinstance(item, pd.DataFrame):
            if id(item) in seen:
                continue
            seen.add(id(item))
            pending.append(item.index)
            pending.append(item.columns)
            for position, dtype in enumerate(item.dtypes.tolist()):
                if dtype == object or isinstance(dtype, pd.CategoricalDtype):  # noqa: E721 - numpy dtype equality
                    pending.append(item.iloc[:, position])
    return value


def check_value(value: Any) -> Any:
    """The check for a single value crossing into template code: refused scalars, raw pandas
    dispatchers (returned wrapped), object arrays and pandas Series/Index holding refused
    values. Plain containers are not walked here; `check_deep` walks them."""
    t = type(value)
    if t in _INERT_TYPES:
        return value
    wrapped = _raw_dispatcher(value)
    if wrapped is not None:
        return dispatch.guard_method(value, *wrapped)
    if _scalar_refused(value):
        raise _refuse(value)
    if t is np.ndarray or isinstance(value, _PANDAS_FRAMES):
        check_deep(value)
    return value


def guard_args(named: tuple[Any, ...], varargs: tuple[Any, ...] | None, varkw: dict[str, Any] | None) -> None:
    """`_guard_args_`: the parameters of a template function or lambda, on entry (a library
    calling a template's callback hands it values no other guard has seen)."""
    for value in named:
        if type(value) not in _INERT_TYPES:
            check_value(value)
    if varargs:
        for value in varargs:
            check_value(value)
    if varkw:
        for value in varkw.values():
            check_value(value)


def _check_out_arguments(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """No object-dtype array as a ufunc's or a numpy function's `out=`: library code would
    store whatever it computes into an array the template then holds."""
    outs: list[Any] = []
    if "out" in kwargs:
        out = kwargs["out"]
        outs.extend(tuple.__iter__(out) if type(out) is tuple else (out,))
    if type(func) is np.ufunc:
        outs.extend(args[func.nin:])
    elif type(func) is types.BuiltinMethodType and type(func.__self__) is np.ufunc:
        outs.extend(args[1:])  # ufunc.at(a, indices, b) writes into a; reduce/accumulate take out=
        if func.__name__ == "at":
            outs.append(args[0] if args else None)
    for out in outs:
        if type(out) is np.ndarray and out.dtype.hasobject:
            raise ValueRefused("object-dtype arrays cannot be used as out= in templates")
        if isinstance(out, (pd.Series, pd.DataFrame, pd.Index)):
            raise ValueRefused("pandas objects cannot be used as out= in templates")


# Library callables that draw from OS entropy unless given a seed.
SEED_REQUIRED: dict[Any, str] = {statistics.NormalDist.samples: "seed"}


def _check_seeded(func: Any, kwargs: dict[str, Any]) -> None:
    target = getattr(func, "__func__", func)
    if type(target) is types.FunctionType and target in SEED_REQUIRED and kwargs.get(SEED_REQUIRED[target]) is None:
        raise ValueRefused(f"{target.__qualname__}() needs {SEED_REQUIRED[target]}=... in templates "
                           "(without one it draws from OS entropy, so runs would not repeat)")


def guarded_call(func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """`_call_`: every call a template makes (`f(x)` is compiled to `_call_(f, x)`).

    A template's own functions and classes are called directly (their parameters are guarded
    on entry). Anything else is a library callable: it is checked as a value (no dunder
    methods, no denied builtins; a raw pandas dispatcher gets its guard), its keyword
    arguments must not pick engines/backends/window functions by name, object arrays cannot
    be its `out=`, no clock word reaches numpy/pandas through it (`sandbox.clock`), and its
    result is checked at every depth before the template sees it.
    """
    if _is_template_code(func) or (type(func) is type and func in USER_CLASSES):
        return func(*args, **kwargs)
    func = check_value(func)
    dispatch.check_call_keywords(kwargs)
    target, target_args, target_kwargs = _unwrapped(func, args, kwargs)
    _check_seeded(target, target_kwargs)
    if "out" in target_kwargs or type(target) is np.ufunc or (
            type(target) is types.BuiltinMethodType and type(target.__self__) is np.ufunc):
        _check_out_arguments(target, target_args, target_kwargs)
    reach = clock.reaches_library(target, target_args, target_kwargs)
    if reach is None:
        return check_deep(func(*args, **kwargs))
    args, kwargs = clock.check_call(target, args, kwargs, reach)
    with clock.library_call():
        result = func(*args, **kwargs)
    return check_deep(result)


def _unwrapped(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
    """What `functools.partial` wrappers finally call, with the arguments they add."""
    while type(func) is functools.partial:
        args, kwargs, func = (*func.args, *args), {**func.keywords, **kwargs}, func.func
    return func, args, kwargs


def guarded_iter(obj: Any) -> Any:
    """`_getiter_`: `for` loops, comprehensions and unpacking; every element is checked."""
    iterator = iter(obj)
    t = type(obj)
    if t is range or t is str or t is bytes:
        return iterator
    if t in _SEQUENCE_TYPES or t is dict or t is np.ndarray and not obj.dtype.hasobject:
        return _checked(iterator, check_value)
    return _checked(iterator, check_deep)


def _checked(iterator: Any, check: Callable[[Any], Any]) -> Any:
    for value in iterator:
        yield check(value)


def guard_with_value(value: Any) -> Any:
    """`_guard_`: what `with ... as x` binds."""
    return check_deep(value)


def guard_decorator(decorator: Any) -> Callable[[Any], Any]:
    """`_decorator_`: `@d` applies `d` through the same call guard."""
    return functools.partial(guarded_call, decorator)


def _initializes_own_object(obj: Any) -> bool:
    """`obj` is a `super()` bound to an instance of one of the template's own classes, from one of
    them: the one dunder a template may read (`super().__init__(...)` in its classes). Its
    `__init__` then comes from the template's classes or their allowed bases (object, dict, list,
    exceptions). Any other `super(cls, obj)` (`super(pd.Series, s)`, `super(C, C)`) is refused
    like a direct dunder read, however the attribute is reached (`getattr`, `functools.partial`)."""
    if type(obj) is not super:
        return False
    this, instance = obj.__thisclass__, obj.__self__
    return (type(this) is type and this in USER_CLASSES and type(type(instance)) is type
            and type(instance) in USER_CLASSES and isinstance(instance, this))


def guarded_getattr(obj: Any, name: str) -> Any:
    """`obj.name` in a template."""
    if type(name) is not str:
        raise TypeError("attribute names must be str")
    trusted = False
    if name[:1] == "_":
        if not (name == "__init__" and _initializes_own_object(obj)):
            raise AttributeError(f'"{name}" is not accessible in templates (names starting with "_" are blocked)')
    elif type(obj) in _TRUSTED_NAMESPACES or type(obj) in USER_CLASSES or obj in _user_class_set(obj):
        trusted = True
    elif name in DENIED_ATTRIBUTES:
        raise _deny(obj, name)
    elif name.startswith(DENIED_PREFIXES) and name not in ALLOWED_TO_METHODS:
        raise _deny(obj, name)
    elif name in EXCEPTION_DENIED_ATTRIBUTES and isinstance(obj, BaseException):
        raise _deny(obj, name, "it exposes library internals")
    rule = TYPE_RULES.get(type(obj))
    if rule is not None and name not in rule:
        if type(obj) is np.random.Generator:
            hint = GENERATOR_HINTS.get(name) or proxies.suggestion(name, rule).lstrip("; ")
            raise AttributeError(f"rng.{name} is not available: rng is a numpy Generator"
                                 + (f"; {hint}" if hint else "; see its sampling methods (integers, random, normal, choice, ...)"))
        raise _deny(obj, name, "only its sampling methods are available" if rule else "no attributes")
    if name in NUMPY_DENIED_ATTRIBUTES and (
            isinstance(obj, (np.ndarray, np.generic))
            or (isinstance(obj, type) and issubclass(obj, (np.ndarray, np.generic)))):
        raise _deny(obj, name, "raw memory access is blocked")
    if name in ("format", "format_map") and (
            isinstance(obj, str) or (isinstance(obj, type) and issubclass(obj, str))):
        return _safe_format(obj, name)
    if name in dispatch.GUARDED_METHODS:
        kind = _is_pandas(obj)
        if kind:
            return dispatch.guard_method(getattr(obj, name), name, offset=1 if kind == 2 else 0)
    value = getattr(obj, name)
    if name == "__init__":
        return value
    try:
        return check_value(value) if trusted else check_deep(value)
    except ValueRefused:
        raise _deny(obj, name, "it is an internal object") from None


def guarded_getitem(obj: Any, key: Any) -> Any:
    """`obj[key]` in a template."""
    clock.check_key(obj, key)
    value = obj[key]
    t = type(obj)
    try:
        if t in _SEQUENCE_TYPES or t is dict or t is str or t in USER_CLASSES:
            return check_value(value)
        return check_deep(value)
    except ValueRefused:
        raise TypeError("this item is not available in templates") from None


def guarded_getattr_builtin(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """The `getattr` builtin a template sees."""
    try:
        return guarded_getattr(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default


def guarded_hasattr(obj: Any, name: str) -> bool:
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


# --- write policy ------------------------------------------------------------------------

PLAIN_CONTAINERS = frozenset({dict, list, collections.defaultdict, collections.OrderedDict,
                              collections.Counter, collections.deque})
# Library objects a template may assign into (df["x"] = ..., arr[i] = ..., df.loc[...] = ...).
_LIBRARY_WRITABLE = (
    np.ndarray, pd.DataFrame, pd.Series, pd.Index,
    type(pd.DataFrame().loc), type(pd.DataFrame().iloc), type(pd.DataFrame().at), type(pd.DataFrame().iat),
)
# Attributes a template may set on those library objects.
WRITABLE_LIBRARY_ATTRIBUTES = frozenset({"columns", "index", "name", "names", "attrs", "shape"})


def _holds_callable(value: Any) -> bool:
    """A function, or a plain list/tuple/object array with one at its top level."""
    if callable(value):
        return True
    t = type(value)
    if t is list or t is tuple:
        return any(map(callable, value))
    if t is np.ndarray and value.dtype.kind == "O":
        return any(map(callable, value.ravel().tolist()))
    return False


class LibraryWriter:
    """What `_write_` hands back for a numpy/pandas object: items (data only: no functions in
    arrays or pandas objects), plus a few plain attributes."""

    __slots__ = ("_LibraryWriter__target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_LibraryWriter__target", target)

    def __setitem__(self, key: Any, value: Any) -> None:
        if _holds_callable(value):
            raise TypeError("functions cannot be stored in arrays or pandas objects in templates")
        clock.check_stored(key, value)
        self.__target[key] = value

    def __delitem__(self, key: Any) -> None:
        del self.__target[key]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in WRITABLE_LIBRARY_ATTRIBUTES:
            allowed = ", ".join(sorted(WRITABLE_LIBRARY_ATTRIBUTES))
            raise TypeError(f"cannot set {type(self.__target).__name__}.{name} in templates "
                            f"(settable: {allowed}; use obj['{name}'] = ... for a column)")
        clock.check_stored(name, value)
        setattr(self.__target, name, value)

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot delete attributes of {type(self.__target).__name__} in templates")


class WritePolicy:
    """Which objects a template may modify: plain containers, its own classes and their
    instances, and numpy/pandas data (items, and a few attributes). Nothing else: not the
    module proxies, functions, classes of libraries, the handler or the generators."""

    def __init__(self) -> None:
        self.user_classes = USER_CLASSES

    def write(self, obj: Any) -> Any:
        t = type(obj)
        if t in PLAIN_CONTAINERS or t in self.user_classes:
            return obj
        if t is type and obj in self.user_classes:
            return obj
        if isinstance(obj, _LIBRARY_WRITABLE):
            return LibraryWriter(obj)
        raise TypeError(f"cannot modify {_label(obj)} objects in templates")

    def setattr(self, obj: Any, name: str, value: Any) -> None:
        self._check_name(name)
        setattr(self.write(obj), name, value)

    def delattr(self, obj: Any, name: str) -> None:
        self._check_name(name)
        delattr(self.write(obj), name)

    @staticmethod
    def _check_name(name: Any) -> None:
        if type(name) is not str or name[:1] == "_":
            raise AttributeError(f"cannot set attribute {name!r} in templates")

    def inplace_attr(self, obj: Any, name: str, op: str, value: Any) -> None:
        current = guarded_getattr(obj, name)
        self.setattr(obj, name, inplace_var(op, current, value))

    def inplace_item(self, obj: Any, key: Any, op: str, value: Any) -> None:
        current = guarded_getitem(obj, key)
        self.write(obj)[key] = inplace_var(op, current, value)

    def metaclass(self, name: str, bases: tuple[Any, ...], namespace: dict[str, Any]) -> type:
        """Creates a template's classes; they may derive only from its own classes,
        object, dict, list and the exception classes in the builtins."""
        for base in bases:
            if not (isinstance(base, type) and (base in self.user_classes or base in ALLOWED_BASES)):
                raise TypeError(f"class {name}: templates may derive classes only from their own classes, "
                                f"object, dict, list and exceptions (not {_label(base)})")
        cls = type(name, bases, namespace)
        self.user_classes.add(cls)
        return cls


_INPLACE_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "<<=": operator.ilshift,
    ">>=": operator.irshift, "&=": operator.iand, "^=": operator.ixor, "|=": operator.ior,
    "@=": operator.imatmul,
}


def inplace_var(op: str, current: Any, value: Any) -> Any:
    return _INPLACE_OPERATORS[op](current, value)


# --- print -------------------------------------------------------------------------------


class PrintSink:
    """Collects what a run prints, up to a cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.size = 0
        self.truncated = False

    def write(self, text: str) -> None:
        if self.size >= self.cap:
            self.truncated = True
            return
        text = str(text)[: self.cap - self.size]
        self.parts.append(text)
        self.size += len(text)

    def text(self) -> str:
        return "".join(self.parts) + ("\n[output truncated]" if self.truncated else "")


def make_print_factory(sink: PrintSink) -> Callable[..., Any]:
    class Printer:
        __slots__ = ("_Printer__own",)

        def __init__(self, _getattr: Any = None) -> None:
            object.__setattr__(self, "_Printer__own", [])

        def write(self, text: str) -> None:
            if len(self.__own) < 10000:
                self.__own.append(text)
            sink.write(text)

        def __call__(self) -> str:
            return "".join(self.__own)

        def _call_print(self, *objects: Any, **kwargs: Any) -> None:
            if kwargs.pop("file", None) is not None:
                raise TypeError("print(file=...) is not available in templates")
            builtins.print(*objects, **kwargs, file=self)

    return Printer


# --- the namespace -----------------------------------------------------------------------

_SAFE_BUILTIN_NAMES = (
    "list", "dict", "set", "frozenset", "tuple", "sorted", "reversed", "zip", "enumerate", "map", "filter",
    "min", "max", "sum", "any", "all", "iter", "next", "object", "super", "property", "staticmethod",
    "classmethod", "format", "bin", "ascii", "bytes", "NotImplemented", "StopIteration",
)
ALLOWED_BASES = frozenset({object, dict, list} | {v for v in safe_builtins.values()
                                                   if isinstance(v, type) and issubclass(v, BaseException)})


_VALUE_HASHABLE = (str, bytes, int, float, complex, bool, type(None))


def refuse_id(obj: Any) -> int:
    raise TypeError("id() is not available in templates: it differs between processes, so items keyed on it "
                    "are not reproducible; derive everything from rng and the data")


def value_hash(obj: Any) -> int:
    """`hash()` for values only (str, numbers, tuples of them): a hash by identity differs between
    processes, so items keyed on it are not reproducible."""
    if type(obj) in (tuple, frozenset):
        for part in obj:
            value_hash(part)
    elif type(obj) not in _VALUE_HASHABLE:
        raise TypeError(f"hash() of a {type(obj).__name__} is not available in templates: it differs between "
                        "processes; hash strings, numbers or tuples of them, or draw from rng")
    return hash(obj)


def make_builtins(writes: WritePolicy, importer: Callable[..., Any]) -> dict[str, Any]:
    table = dict(safe_builtins)
    for name in _SAFE_BUILTIN_NAMES:
        table[name] = getattr(builtins, name)
    table.update(
        getattr=guarded_getattr_builtin, hasattr=guarded_hasattr, setattr=writes.setattr,
        delattr=writes.delattr, __import__=importer, id=refuse_id, hash=value_hash,
    )
    return table


def build_namespace(*, handler: Any, randomness: proxies.RunRandomness, helpers: dict[str, Any],
                    synth: Any, print_sink: PrintSink) -> dict[str, Any]:
    """The globals of one template run: the guards plus the injected names, nothing else."""
    writes = WritePolicy()
    np_proxy = proxies.numpy_proxy(randomness)
    random_module = proxies.random_proxy(randomness)
    importer = proxies.make_importer(proxies.import_table(np_proxy, random_module))
    namespace: dict[str, Any] = {
        "__builtins__": make_builtins(writes, importer),
        "__name__": "template",
        "__metaclass__": writes.metaclass,
        "_getattr_": guarded_getattr,
        "_getitem_": guarded_getitem,
        "_getiter_": guarded_iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": writes.write,
        "_inplacevar_": inplace_var,
        "_inplace_attr_": writes.inplace_attr,
        "_inplace_item_": writes.inplace_item,
        "_print_": make_print_factory(print_sink),
        "_apply_": guarded_call,
        "_call_": guarded_call,
        "_guard_args_": guard_args,
        "_guard_": guard_with_value,
        "_decorator_": guard_decorator,
        "_returned_": clock.returned,
        "_compare_": clock.compare,
        "_compare_chain_": clock.compare_chain,
        # what the template contract promises
        "handler": handler,
        "rng": randomness.rng,
        "np": np_proxy,
        "pd": proxies.PANDAS,
        "math": proxies.MATH,
        "random": random_module,
        "statistics": proxies.STATISTICS,
        "datetime": proxies.DATETIME,
        "synth": synth,
    }
    namespace.update(helpers)
    return namespace
