"""A package's names imported on first use: its ``__init__`` stays free of its modules' libraries."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def exports(package: str, modules: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each name `package` offers, to the module (under `package`) that defines it."""
    return {name: f"{package}.{module}" for module, names in modules.items() for name in names}


def lazy_getattr(package: str, offered: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of `package`: an offered name from its module, imported now."""
    def attribute(name: str) -> Any:
        if name not in offered:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(offered[name]), name)
    return attribute
