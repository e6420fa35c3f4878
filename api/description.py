"""The API description (``/openapi.json``) as the server holds itself to it.

`DescribedPaths` indexes the description's paths: which methods a request path has and which query
parameters each of its operations takes. `HeldToDescription` refuses what the description does not
describe, before any route runs, so that the server agrees with what a client reads:

- a method the description does not give a described path is a 405 whose ``Allow`` names the
  methods it does give (Starlette named only those of the first route whose pattern matched, so
  ``OPTIONS /banks`` said ``Allow: POST`` although ``GET /banks`` exists, and ``GET /banks/imports``
  reached ``GET /banks/{bank_id}`` and got a 422 for its id);
- a query parameter the operation does not take is a 422 naming it and the ones it takes, never
  silently ignored (``?fmt=zip`` for ``?format=zip`` used the default format); for an operation
  behind the API key only once the key is live: without one the route answers 401 as always (a
  key sent as ``?api_key=`` is told to go in the header).

Paths outside the description (the review pages, ``/docs``) are left as they are.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DescribedPaths", "HeldToDescription"]

_PARAMETER = re.compile(r"\{([^}/]+)\}")


@dataclass(frozen=True)
class _Operation:
    query: frozenset[str]  # the query parameters it takes
    keyed: bool  # behind the API key


@dataclass(frozen=True)
class _Path:
    pattern: re.Pattern[str]
    operations: dict[str, _Operation]  # by method


def _path_pattern(template: str, operations: dict[str, Any]) -> re.Pattern[str]:
    """A template's path as a regex: an integer parameter matches digits only (``/banks/{bank_id}``
    is not ``/banks/imports``), any other one segment."""
    integers = {parameter["name"] for operation in operations.values() if isinstance(operation, dict)
                for parameter in operation.get("parameters", [])
                if parameter.get("in") == "path" and parameter.get("schema", {}).get("type") == "integer"}
    parts, last = [], 0
    for match in _PARAMETER.finditer(template):
        parts += [re.escape(template[last:match.start()]), r"[+-]?[0-9]+" if match[1] in integers else r"[^/]+"]
        last = match.end()
    return re.compile("".join([*parts, re.escape(template[last:])]))


class DescribedPaths:
    """The description's paths, matched against request paths."""

    def __init__(self, description: dict[str, Any]) -> None:
        self._paths = [
            _Path(_path_pattern(template, operations),
                  {method.upper(): _Operation(frozenset(p["name"] for p in operation.get("parameters", [])
                                                        if p.get("in") == "query"), bool(operation.get("security")))
                   for method, operation in operations.items() if isinstance(operation, dict)})
            for template, operations in description.get("paths", {}).items()]

    def _matching(self, path: str) -> list[_Path]:
        return [described for described in self._paths if described.pattern.fullmatch(path)]

    def methods(self, path: str) -> list[str] | None:
        """The methods of `path`, sorted; None when the description has no such path."""
        matching = self._matching(path)
        if not matching:
            return None
        return sorted({method for described in matching for method in described.operations})

    def operation(self, method: str, path: str) -> _Operation | None:
        """The described operation of `method` on `path`; None when the description has none."""
        for described in self._matching(path):
            if method in described.operations:
                return described.operations[method]
        return None


class HeldToDescription:
    """ASGI middleware: a request to a described path with a method it does not have gets 405 and
    ``Allow``; one with a query parameter its operation does not take gets 422, in FastAPI's error
    shape (``loc: ["query", NAME]``), once a keyed operation's ``X-API-Key`` is live (`is_live_key`)."""

    def __init__(self, app: ASGIApp, *, paths: Callable[[], DescribedPaths],
                 is_live_key: Callable[[str], Awaitable[bool]]) -> None:
        self.app = app
        self.paths = paths  # built on first use: the description is generated from the finished app
        self.is_live_key = is_live_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = await self._refusal(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    async def _refusal(self, scope: Scope) -> JSONResponse | None:
        described = self.paths()
        methods = described.methods(scope["path"])
        if methods is None:
            return None
        if scope["method"] not in methods:
            return JSONResponse(status_code=405, content={"detail": "Method Not Allowed"},
                                headers={"Allow": ", ".join(methods)})
        operation = described.operation(scope["method"], scope["path"])
        assert operation is not None
        query = scope.get("query_string", b"").decode("latin-1")
        names = dict.fromkeys(name for name, _ in parse_qsl(query, keep_blank_values=True))
        unknown = [_unknown(name, operation.query) for name in names if name not in operation.query]
        if not unknown or (operation.keyed and not await self._keyed(scope)):
            return None
        return JSONResponse(status_code=422, content={"detail": unknown})

    async def _keyed(self, scope: Scope) -> bool:
        key = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"x-api-key"), None)
        return key is not None and await self.is_live_key(key)


def _unknown(name: str, known: frozenset[str]) -> dict[str, Any]:
    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    takes = f"it takes {', '.join(sorted(known))}" if known else "it takes none"
    return {"type": "unknown_query_parameter", "loc": ["query", name],
            "msg": f"unknown query parameter{hint} ({takes})"}
