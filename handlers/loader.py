"""Loading a DatasetHandler class from a user's source text, with errors a person can act on.

Executing the source runs the user's code: the CLI does it for a user's own file;
the service does it only inside the sandbox.

Handlers written before the package moved under the ``itemsmith`` namespace import
``from handlers import DatasetHandler``; while such a file loads, ``handlers`` (and its loaded
submodules) are aliased to `itemsmith.handlers` and a one-line `LegacyHandlerImportWarning` is
issued. The alias is removed afterwards, so it never shadows another ``handlers`` package.
"""

from __future__ import annotations

import ast
import inspect
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemsmith.handlers.base import _RECORDS_NAMES, _SERIES_NAMES, DatasetHandler, HandlerContractError
from itemsmith.handlers.errors import HandlerSourceError

if TYPE_CHECKING:
    import pandas as pd

LEGACY_PACKAGE = "handlers"
PACKAGE = "itemsmith.handlers"


class LegacyHandlerImportWarning(FutureWarning):
    """A handler file imports the pre-namespace ``handlers`` package (shown to users by default)."""


def _imports_legacy_package(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == LEGACY_PACKAGE for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == LEGACY_PACKAGE:
            return True
    return False


@contextmanager
def _legacy_package_alias(filename: str) -> Iterator[None]:
    """``handlers`` and its loaded submodules as aliases of `itemsmith.handlers` for one load."""
    aliases = {LEGACY_PACKAGE + name[len(PACKAGE):]: module for name, module in list(sys.modules.items())
               if name == PACKAGE or name.startswith(PACKAGE + ".")}
    shadowed = {name: sys.modules[name] for name in aliases if name in sys.modules}
    warnings.warn(f"{filename}: `from handlers import ...` is deprecated; use `from itemsmith.handlers import "
                  "DatasetHandler` (or import nothing)", LegacyHandlerImportWarning, stacklevel=4)
    sys.modules.update(aliases)
    try:
        yield
    finally:
        for name in aliases:
            sys.modules.pop(name, None)
        sys.modules.update(shadowed)


def _is_handler_class(node: ast.ClassDef) -> bool:
    bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
    methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return "DatasetHandler" in bases or bool(methods & set(_RECORDS_NAMES) or methods & set(_SERIES_NAMES))


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        raise HandlerSourceError(f"handler source has a syntax error{where}: {exc.msg}") from None


def find_handler_class_name(source: str, class_name: str | None = None) -> str:
    """Parse `source` and name the one handler class in it (or check `class_name`)."""
    tree = _parse(source)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if class_name is not None:
        chosen = [n for n in classes if n.name == class_name]
        if not chosen:
            raise HandlerSourceError(f"handler source defines no class named {class_name!r}")
    else:
        chosen = [n for n in classes if _is_handler_class(n)]
        if not chosen:
            raise HandlerSourceError(
                "handler source defines no handler class: define a class with records() (or getDataframe()) "
                "and series(record_id) (or query(record_id))"
            )
        if len(chosen) > 1:
            names = ", ".join(n.name for n in chosen)
            raise HandlerSourceError(f"handler source defines several handler classes ({names}); name one")
    return chosen[0].name


def _adapt(cls: type) -> type[DatasetHandler]:
    """Wrap a plain class (TimeSeriesExamAgent style) as a DatasetHandler subclass."""
    if issubclass(cls, DatasetHandler):
        return cls
    try:
        return type(cls.__name__, (cls, DatasetHandler), {"name": getattr(cls, "name", cls.__name__),
                                                           "description": getattr(cls, "description", ""),
                                                           "units": getattr(cls, "units", {}),
                                                           "generated_series": getattr(cls, "generated_series", "")})
    except (TypeError, HandlerContractError) as exc:
        raise HandlerSourceError(f"handler class {cls.__name__} cannot be used: {exc}") from None


def load_handler_class(source: str, class_name: str | None = None, filename: str = "<handler>") -> type[DatasetHandler]:
    """Execute `source` and return its handler class, adapted to DatasetHandler."""
    name = find_handler_class_name(source, class_name)
    namespace: dict[str, Any] = {"__name__": "user_handler", "DatasetHandler": DatasetHandler}
    legacy = _imports_legacy_package(_parse(source))
    try:
        with _legacy_package_alias(filename) if legacy else nullcontext():
            exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - user's own handler; see module doc
    except HandlerContractError as exc:
        raise HandlerSourceError(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any failure of user code becomes a clear error
        raise HandlerSourceError(f"handler source raised {type(exc).__name__} while loading: {exc}") from None
    return _adapt(namespace[name])


def instantiate_handler(cls: type[DatasetHandler], data_dir: Path | None = None) -> DatasetHandler:
    """Create the handler; a constructor taking `data_dir` gets the folder of uploaded files."""
    try:
        params = inspect.signature(cls).parameters
        user_class: Any = cls  # a user's constructor may take data_dir; the base class's does not
        handler = user_class(data_dir=data_dir) if "data_dir" in params else cls()
    except Exception as exc:  # noqa: BLE001
        raise HandlerSourceError(f"handler {cls.__name__}() raised {type(exc).__name__}: {exc}") from None
    return handler


def load_handler_source(source: str, class_name: str | None = None, data_dir: Path | None = None,
                        filename: str = "<handler>") -> DatasetHandler:
    """Load, instantiate and check a handler from source text."""
    handler = instantiate_handler(load_handler_class(source, class_name, filename), data_dir)
    check_handler(handler)
    return handler


def check_handler(handler: DatasetHandler) -> pd.DataFrame:
    """Call records() and series() of the first record; raise HandlerSourceError on a broken contract."""
    import pandas as pd  # here: reading a handler's source (`find_handler_class_name`) needs no pandas

    cls = type(handler).__name__
    description = getattr(handler, "description", "")
    if not isinstance(description, str):  # the planner and generator read it as text
        raise HandlerSourceError(f"{cls}.description must be a string (what the data is: units, sampling, what "
                                 f"a record is), got {type(description).__name__}")
    try:
        records = handler.records()
    except Exception as exc:  # noqa: BLE001
        raise HandlerSourceError(f"{cls}.records() raised {type(exc).__name__}: {exc}") from None
    if not isinstance(records, pd.DataFrame):
        raise HandlerSourceError(f"{cls}.records() must return a pandas DataFrame, got {type(records).__name__}")
    if "record_id" not in records.columns:
        raise HandlerSourceError(
            f"{cls}.records() must have a 'record_id' column; it has {list(records.columns)[:10]}"
        )
    if records.empty:
        raise HandlerSourceError(f"{cls}.records() returned no records")
    if records["record_id"].duplicated().any():
        raise HandlerSourceError(f"{cls}.records() has duplicate record_id values")
    first = records["record_id"].iloc[0]
    try:
        samples = handler.series(first)
    except Exception as exc:  # noqa: BLE001
        raise HandlerSourceError(f"{cls}.series({first!r}) raised {type(exc).__name__}: {exc}") from None
    if not isinstance(samples, pd.DataFrame):
        raise HandlerSourceError(f"{cls}.series() must return a pandas DataFrame, got {type(samples).__name__}")
    if samples.empty:
        raise HandlerSourceError(f"{cls}.series({first!r}) returned no samples")
    return records
