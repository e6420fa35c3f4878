"""Dataset handlers: the contract templates code against, user-source loading, built-in datasets."""

from itemsmith.handlers.base import DatasetHandler, HandlerContractError
from itemsmith.handlers.loader import HandlerSourceError, load_handler_source
from itemsmith.handlers.registry import BUILTIN_HANDLERS, get_builtin, resolve_handler

__all__ = [
    "BUILTIN_HANDLERS",
    "DatasetHandler",
    "HandlerContractError",
    "HandlerSourceError",
    "get_builtin",
    "load_handler_source",
    "resolve_handler",
]
