"""One small registry for every "name -> thing" table: providers, exporters, job kinds, synthetic
generators and built-in handlers.

A `Registry` is a read-only mapping filled by `add` or the `register` decorator. A name is
registered once (a second registration is a bug: two modules claiming one name), and an unknown
name is answered with the known ones and the closest match. `LazyTarget` names an object by
"module:attribute", imported when first used, so that an entry of an optional extra costs nothing
until it is asked for and, when its package is missing, says which extra installs it.

This module imports nothing of ours: every layer may use it.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["DuplicateNameError", "LazyTarget", "MissingExtraError", "Registry", "UnknownNameError"]

T = TypeVar("T")
F = TypeVar("F")


class DuplicateNameError(ValueError):
    """A name registered twice."""


class UnknownNameError(LookupError):
    """A name no entry has; the message lists the known names and the closest one."""


class MissingExtraError(ImportError):
    """A lazy entry whose package is not installed; the message names the extra that installs it."""


class Registry(Mapping[str, T]):
    """Names to entries of one kind (`kind` is how errors call them: "provider", "exporter", ...)."""

    def __init__(self, kind: str, *, unknown_error: Callable[[str], Exception] = UnknownNameError) -> None:
        self.kind = kind
        self._unknown_error = unknown_error
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        if name in self._entries:
            raise DuplicateNameError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def register(self, name: str, make: Callable[[F], T]) -> Callable[[F], F]:
        """A decorator that registers `make(decorated)` under `name` and returns the decorated object."""

        def decorate(obj: F) -> F:
            self.add(name, make(obj))
            return obj

        return decorate

    def resolve(self, name: str) -> T:
        """The entry of `name`, or the registry's error naming the known names and the closest one."""
        try:
            return self._entries[name]
        except KeyError:
            raise self._unknown_error(self.unknown_message(name)) from None

    def unknown_message(self, name: str) -> str:
        known = sorted(self._entries)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown {self.kind} {name!r}{hint} (known: {', '.join(known)})"

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


@dataclass(frozen=True)
class LazyTarget:
    """An object named "module:attribute", imported on `load()`; `extra` is the pip extra that
    installs the module's dependencies."""

    target: str
    extra: str | None = None

    def load(self) -> Any:
        module_name, _, attribute = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f"; install it with: pip install 'itemsmith[{self.extra}]'" if self.extra else ""
            raise MissingExtraError(f"{self.target} needs a missing package ({exc.name}){hint}") from None
        return getattr(module, attribute)
