"""Text without NUL characters, on every route: PostgreSQL cannot store U+0000 in text (psycopg's
``DataError``, a 500) and SQLite stores it silently, so a NUL in a path or query parameter, a form
field or anywhere in a JSON body (keys included) is a 422 in FastAPI's error shape, before the
route runs and on both databases. Uploaded files are bytes and are not checked (a data file may
be binary; a handler's source is refused by the handler loader).

`TextCheckedRoute` is the ``route_class`` of every router: it inspects the request that FastAPI's
own handler then reads (Starlette caches the body and the form on the request)."""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.datastructures import UploadFile

__all__ = ["NUL_MESSAGE", "TextCheckedRoute", "nul_locations"]

NUL_MESSAGE = "text must not contain NUL (U+0000) characters"

Location = tuple[str | int, ...]


def nul_locations(value: Any, location: Location) -> Iterator[Location]:
    """Where in a decoded JSON value a string (a value or an object key) holds a NUL."""
    if isinstance(value, str):
        if "\x00" in value:
            yield location
    elif isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                yield (*location, key)
            yield from nul_locations(item, (*location, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nul_locations(item, (*location, index))


async def _request_nul_locations(request: Request) -> list[Location]:
    found: list[Location] = [("path", name) for name, value in request.path_params.items()
                             if isinstance(value, str) and "\x00" in value]
    found += [("query", name) for name, value in request.query_params.multi_items() if "\x00" in name + value]
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("multipart/form-data", "application/x-www-form-urlencoded")):
        form = await request.form()
        found += [("body", name) for name, value in form.multi_items()
                  if not isinstance(value, UploadFile) and "\x00" in name + value]
        return found
    body = await request.body()
    if body and (not content_type or "json" in content_type):
        try:
            decoded = json.loads(body)
        except ValueError:
            return found  # FastAPI answers malformed JSON itself
        found += list(nul_locations(decoded, ("body",)))
    return found


def _refusal(locations: list[Location]) -> JSONResponse:
    return JSONResponse(status_code=422, content={"detail": [
        {"type": "string_nul", "loc": list(location), "msg": NUL_MESSAGE} for location in locations]})


class TextCheckedRoute(APIRoute):
    """An API route that answers 422 to a request with a NUL in any text it carries."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            locations = await _request_nul_locations(request)
            if locations:
                await request.close()  # the form's spooled files
                return _refusal(locations)
            return await handler(request)

        return checked
