"""The app's OpenAPI document as client generators need it (FastAPI's, completed):

- operationIds are the route functions' names without ``_route`` (``create_bank``, not
  ``create_bank_route_banks_post``), checked unique;
- every operation behind the API key documents its 401, every operation its 503 (the
  database or the sandbox busy: retry after ``Retry-After`` seconds) and its 422 (an unknown query
  parameter is one: `api.description`), every operation with a body its 400 (a body that is not
  JSON, or not a form);
- a parameter that may be left out is described by its type alone: a header or query string
  cannot carry JSON's ``null`` (FastAPI describes ``int | None`` as "integer or null");
- uploads are ``format: binary`` strings (OpenAPI 3.1's ``contentMediaType`` alone makes
  generated clients type them as ``str``), and so are the zip and PNG responses.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

__all__ = ["install_openapi", "operation_id"]

_BINARY = {"type": "string", "format": "binary"}
_ERROR = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorDetail"}}}}
_ERROR_SCHEMA = {"title": "ErrorDetail", "type": "object", "required": ["detail"],
                 "properties": {"detail": {"title": "Detail", "type": "string"}}}
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_INVALID = {"description": "a parameter or the body is invalid, or a query parameter is unknown",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}}
_MALFORMED = {"description": "the body is not what its content type says (malformed JSON or form data)", **_ERROR}


def operation_id(route: APIRoute) -> str:
    return route.name.removesuffix("_route")


def _binary_strings(node: Any) -> None:
    """Every string schema with a ``contentMediaType`` (an upload) becomes ``format: binary``."""
    if isinstance(node, dict):
        if node.get("type") == "string" and "contentMediaType" in node:
            del node["contentMediaType"]
            node["format"] = "binary"
        for value in node.values():
            _binary_strings(value)
    elif isinstance(node, list):
        for value in node:
            _binary_strings(value)


def _without_null(parameter: dict[str, Any]) -> None:
    """A parameter schema's ``null`` branch removed (absent is how a parameter says "none")."""
    schema = parameter.get("schema", {})
    branches = [branch for branch in schema.get("anyOf", []) if branch.get("type") != "null"]
    if "anyOf" in schema and len(branches) < len(schema["anyOf"]):
        del schema["anyOf"]
        if len(branches) == 1:
            schema.update(branches[0])
        else:
            schema["anyOf"] = branches


def _complete(schema: dict[str, Any]) -> dict[str, Any]:
    schema.setdefault("components", {}).setdefault("schemas", {})["ErrorDetail"] = _ERROR_SCHEMA
    seen: dict[str, str] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            other = seen.setdefault(operation["operationId"], f"{method.upper()} {path}")
            if other != f"{method.upper()} {path}":
                raise RuntimeError(f"operationId {operation['operationId']!r} of {method.upper()} {path} is "
                                   f"{other}'s too")
            responses = operation.setdefault("responses", {})
            if operation.get("security"):
                responses.setdefault("401", {"description": "missing, unknown or revoked API key", **_ERROR})
            responses.setdefault("503", {"description": "the database or the sandbox is busy: try again after "
                                                        "Retry-After seconds", **_ERROR})
            responses.setdefault("422", _INVALID)
            if "requestBody" in operation:
                responses.setdefault("400", _MALFORMED)
            for parameter in operation.get("parameters", []):
                _without_null(parameter)
            for response in responses.values():
                for media, content in response.get("content", {}).items():
                    if media in ("application/zip", "image/png", "application/octet-stream"):
                        content["schema"] = dict(_BINARY)
    _binary_strings(schema)
    return schema


def install_openapi(app: FastAPI) -> None:
    """Serve the completed document at ``/openapi.json`` (built once)."""
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _complete(get_openapi(title=app.title, version=app.version,
                                                       description=app.description, routes=app.routes))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
