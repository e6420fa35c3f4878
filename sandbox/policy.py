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

from itemsmith.sandbox import dispatch, proxies
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
        if (allow_magic_methods and name in EXTRA_MAGIC_METHODS and getattr(node, "col_offset", 0) != 0):
            return
        super().check_name(node, name, allow_magic_methods)

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
# Names that are never reachable as attributes of library objects, with the reason given.
DENIAL_REASONS: dict[str, str] = {
    **{n: "file, network and pickle I/O is blocked" for n in _IO_ATTRIBUTES},
    **{n: "expression evaluation is blocked" for n in _EVAL_ATTRIBUTES},
    **{n: "raw memory access is blocked" for n in _NATIVE_ATTRIBUTES},
    **{n: "plotting and styling backends are blocked" for n in _BACKEND_ATTRIBUTES},
    **{n: "global options and registries cannot be changed" for n in _OPTION_ATTRIBUTES},
    **{n: "introspection is blocked" for n in _INTROSPECTION_ATTRIBUTES},
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


def guarded_getattr(obj: Any, name: str) -> Any:
    """`obj.name` in a template."""
    if type(name) is not str:
        raise TypeError("attribute names must be str")
    if name[:1] == "_":
        if not (name == "__init__" and type(obj) is super):
            raise AttributeError(f'"{name}" is not accessible in templates (names starting with "_" are blocked)')
    elif type(obj) in _TRUSTED_NAMESPACES or type(obj) in USER_CLASSES or obj in _user_class_set(obj):
        pass
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
    vt = type(value)
    if vt in DENIED_VALUE_TYPES or (vt in _CALLABLE_TYPES and _denied_callable(value)):
        raise _deny(obj, name)
    return value


def guarded_getitem(obj: Any, key: Any) -> Any:
    """`obj[key]` in a template."""
    value = obj[key]
    vt = type(value)
    if vt in DENIED_VALUE_TYPES or (vt in _CALLABLE_TYPES and _denied_callable(value)):
        raise TypeError("this item is not available in templates")
    return value


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


class LibraryWriter:
    """What `_write_` hands back for a numpy/pandas object: items, plus a few plain attributes."""

    __slots__ = ("_LibraryWriter__target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_LibraryWriter__target", target)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.__target[key] = value

    def __delitem__(self, key: Any) -> None:
        del self.__target[key]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in WRITABLE_LIBRARY_ATTRIBUTES:
            allowed = ", ".join(sorted(WRITABLE_LIBRARY_ATTRIBUTES))
            raise TypeError(f"cannot set {type(self.__target).__name__}.{name} in templates "
                            f"(settable: {allowed}; use obj['{name}'] = ... for a column)")
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


def make_builtins(writes: WritePolicy, importer: Callable[..., Any]) -> dict[str, Any]:
    table = dict(safe_builtins)
    for name in _SAFE_BUILTIN_NAMES:
        table[name] = getattr(builtins, name)
    table.update(
        getattr=guarded_getattr_builtin, hasattr=guarded_hasattr, setattr=writes.setattr,
        delattr=writes.delattr, __import__=importer,
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
        "_getiter_": iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": writes.write,
        "_inplacevar_": inplace_var,
        "_inplace_attr_": writes.inplace_attr,
        "_inplace_item_": writes.inplace_item,
        "_print_": make_print_factory(print_sink),
        "_apply_": lambda f, *a, **kw: f(*a, **kw),
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
