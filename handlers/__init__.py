"""Dataset handlers: the contract templates code against, user-source loading, built-in datasets.

The names below are imported when first used, so that naming a built-in handler
(`handlers.registry`) imports no data library."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from itemsmith.handlers.base import DatasetHandler, HandlerContractError
    from itemsmith.handlers.errors import HandlerSourceError
    from itemsmith.handlers.loader import load_handler_source
    from itemsmith.handlers.registry import BUILTIN_HANDLERS, get_builtin, resolve_handler

_EXPORTS = {
    "BUILTIN_HANDLERS": "itemsmith.handlers.registry",
    "DatasetHandler": "itemsmith.handlers.base",
    "HandlerContractError": "itemsmith.handlers.base",
    "HandlerSourceError": "itemsmith.handlers.errors",
    "get_builtin": "itemsmith.handlers.registry",
    "load_handler_source": "itemsmith.handlers.loader",
    "resolve_handler": "itemsmith.handlers.registry",
}

__all__ = ["BUILTIN_HANDLERS", "DatasetHandler", "HandlerContractError", "HandlerSourceError", "get_builtin",
           "load_handler_source", "resolve_handler"]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'itemsmith.handlers' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
