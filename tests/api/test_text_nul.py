"""A NUL character in any text a request carries is a 422 (``string_nul``) before the
route runs, on SQLite (which would store it) and PostgreSQL (which would fail with a 500).

The sweep walks the OpenAPI schema, so a route or field added later is covered without naming it:
every string path and query parameter, and every string property of every JSON and form body. The
error names the exact field, which FastAPI's own validation (missing fields, bad types) never
would, so a 422 for another reason does not pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from itemsmith.templates_bank.storage import BankRow, open_session

NUL = "a\x00b"


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'bank.sqlite'}"
    else:
        yield request.getfixturevalue("postgres_database")


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _is_text(schema: dict[str, Any], spec: dict[str, Any]) -> bool:
    schema = _resolve(schema, spec)
    options = schema.get("anyOf", [schema])
    return any(_resolve(o, spec).get("type") == "string" and "format" not in _resolve(o, spec) for o in options)


def _text_inputs(spec: dict[str, Any]) -> Iterator[tuple[str, str, str, str, str]]:
    """(method, path, where, name, media type) of every text input of the API."""
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] in ("path", "query") and _is_text(parameter["schema"], spec):
                    yield method, path, parameter["in"], parameter["name"], ""
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                body = _resolve(content["schema"], spec)
                for name, schema in body.get("properties", {}).items():
                    if _is_text(schema, spec):
                        yield method, path, "body", name, media


def _sample_path(path: str, nul_param: str | None) -> str:
    import re

    return re.sub(r"\{([^}]+)\}", lambda m: "a%00b" if m[1] == nul_param else "1", path)


def test_every_text_field_of_every_route_refuses_a_nul(client: TestClient, api_key: str, seeded) -> None:
    spec = client.get("/openapi.json").json()
    inputs = list(_text_inputs(spec))
    # the sweep reaches JSON bodies, form fields, query and path parameters
    assert {where for _, _, where, _, _ in inputs} == {"path", "query", "body"}
    assert {media for *_, media in inputs if media} >= {"application/json", "multipart/form-data"}
    misses = []
    for method, path, where, name, media in inputs:
        kwargs: dict[str, Any] = {"headers": {"X-API-Key": api_key}}
        url = _sample_path(path, name if where == "path" else None)
        if where == "query":
            kwargs["params"] = {name: NUL}
        elif media == "application/json":
            kwargs["json"] = {name: NUL}
        elif media:
            kwargs["data"] = {name: NUL}
            kwargs["files"] = {"unused": ("x.txt", b"\x00binary data is not text\x00")}
        response = client.request(method.upper(), url, **kwargs)
        detail = response.json().get("detail") if response.headers.get("content-type") == "application/json" else None
        if response.status_code != 422 or not isinstance(detail, list) or \
                {"type": "string_nul", "loc": [where, name], "msg": detail[0].get("msg")} not in detail:
            misses.append(f"{method.upper()} {path} {where}.{name}: {response.status_code} {response.text[:200]}")
    assert not misses, "\n".join(misses)


def test_a_nul_in_a_json_key_or_nested_value_is_refused_and_clean_text_is_not(client: TestClient, api_key: str,
                                                                             seeded) -> None:
    headers = {"X-API-Key": api_key}
    url = f"/templates/{seeded.accepted.id}/review"
    nested = client.post(url, json={"decision": "approve", "note": ["x", {"deep": NUL}]}, headers=headers)
    assert nested.status_code == 422 and nested.json()["detail"][0]["loc"] == ["body", "note", 1, "deep"]
    key = client.post(url, json={"decision": "approve", "no\x00te": "x"}, headers=headers)
    assert key.status_code == 422 and key.json()["detail"][0]["type"] == "string_nul"
    # an escaped backslash followed by "u0000" is six characters of text, not a NUL
    escaped = client.post(url, content=b'{"decision": "approve", "note": "\\\\u0000 is how JSON writes NUL"}',
                          headers={**headers, "content-type": "application/json"})
    assert escaped.status_code == 201, escaped.text


def test_a_bank_whose_task_holds_a_nul_is_refused_and_nothing_is_stored(client: TestClient, api_key: str,
                                                                       engine) -> None:
    response = client.post("/banks", data={"name": "nul-bank", "task": f"trends {NUL}", "handler": "synthetic"},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "task"]
    with open_session(engine) as session:
        assert session.scalar(select(func.count()).select_from(BankRow)) == 0
    control = client.post("/banks", data={"name": "nul-bank", "task": "trends of the series", "handler": "synthetic"},
                          headers={"X-API-Key": api_key})
    assert control.status_code == 202, control.text
