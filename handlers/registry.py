"""Built-in handlers by name, and resolving a name or a path to a handler."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from itemsmith.handlers.errors import HandlerSourceError
from itemsmith.registry import LazyTarget, MissingExtraError, Registry

if TYPE_CHECKING:
    from itemsmith.handlers.base import DatasetHandler


@dataclass(frozen=True)
class BuiltinHandler:
    """A built-in handler, imported only when used (real datasets need the `examples` extra)."""

    name: str
    target: str  # "module:Class"
    extra: str | None = None

    def load_class(self) -> type[DatasetHandler]:
        try:
            cls: type[DatasetHandler] = LazyTarget(self.target, self.extra).load()
        except MissingExtraError as exc:
            raise HandlerSourceError(f"handler {self.name!r}: {exc}") from None
        return cls


BUILTIN_HANDLERS: Registry[BuiltinHandler] = Registry("handler", unknown_error=HandlerSourceError)
for _handler in (
    BuiltinHandler("synthetic", "itemsmith.handlers.synthetic_handler:SyntheticHandler"),
    BuiltinHandler("ecg", "itemsmith.handlers.datasets.ecg:ToyECGHandler", "examples"),
    BuiltinHandler("mitdb", "itemsmith.handlers.datasets.ecg:MITBIHBeatsHandler", "examples"),
    BuiltinHandler("glucose", "itemsmith.handlers.datasets.glucose:GlucoseHandler", "examples"),
    BuiltinHandler("stocks", "itemsmith.handlers.datasets.stocks:StocksHandler", "examples"),
    BuiltinHandler("weather", "itemsmith.handlers.datasets.weather:SeattleWeatherHandler", "examples"),
    BuiltinHandler("italy_power", "itemsmith.handlers.datasets.ucr:ItalyPowerDemandHandler", "examples"),
    BuiltinHandler("basic_motions", "itemsmith.handlers.datasets.ucr:BasicMotionsHandler", "examples"),
):
    BUILTIN_HANDLERS.add(_handler.name, _handler)


@cache
def get_builtin(name: str) -> DatasetHandler:
    """The (cached) instance of a built-in handler."""
    return BUILTIN_HANDLERS.resolve(name).load_class()()


def resolve_handler(name_or_path: str) -> DatasetHandler:
    """A built-in handler by name, or a user's handler from a `.py` file."""
    from itemsmith.handlers.loader import load_handler_source

    path = Path(name_or_path)
    if name_or_path.endswith(".py") or path.is_file():
        if not path.is_file():
            raise HandlerSourceError(f"handler file {name_or_path!r} does not exist")
        return load_handler_source(path.read_text(), data_dir=path.parent, filename=str(path))
    return get_builtin(name_or_path)
