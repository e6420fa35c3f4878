"""The server holds itself to its API description (`api.description`): an undescribed method of a
described path is a 405 whose ``Allow`` lists exactly the described methods, and a query parameter
the operation does not take is a 422 naming it, never ignored."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _concrete(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", template)


def test_every_undescribed_method_is_a_405_whose_allow_lists_the_described_ones(client: TestClient,
                                                                                  api_key: str) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    checked = 0
    for template, operations in paths.items():
        described = {method.upper() for method in operations}
        allow = sorted(described)
        for method in set(METHODS) - described:
            response = client.request(method, _concrete(template), headers={"X-API-Key": api_key})
            assert response.status_code == 405, (method, template, response.text)
            assert sorted(m.strip() for m in response.headers["allow"].split(",")) == allow, (method, template)
            checked += 1
    assert checked > 50


def test_a_literal_segment_is_not_taken_for_an_id(client: TestClient, api_key: str) -> None:
    """``/banks/imports`` only takes POST; it is not ``/banks/{bank_id}`` with an id "imports"."""
    response = client.get("/banks/imports", headers={"X-API-Key": api_key})
    assert response.status_code == 405 and response.headers["allow"] == "POST"


def test_an_unknown_query_parameter_is_a_422_that_names_it(client: TestClient, api_key: str, seeded) -> None:
    headers = {"X-API-Key": api_key}
    response = client.get("/jobs", params={"kind": "author", "kid": "x"}, headers=headers)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "kid"] and "did you mean 'kind'" in error["msg"]
    # a misspelt option of an operation with a body is refused before the body is looked at
    response = client.post("/releases/1/exports", params={"fmt": "jsonl"}, headers=headers)
    assert response.status_code == 422 and "did you mean 'format'" in response.json()["detail"][0]["msg"]
    assert client.get("/banks", params={"x": ""}, headers=headers).status_code == 422  # blank values count too


def test_described_query_parameters_and_undescribed_pages_pass(client: TestClient, api_key: str, seeded) -> None:
    headers = {"X-API-Key": api_key}
    assert client.get("/jobs", params={"kind": "author", "limit": 5}, headers=headers).status_code == 200
    # the review pages are not part of the API description: their own rules apply
    assert client.get("/review/login", params={"next": "/review"}).status_code == 200


def test_without_a_live_key_the_route_answers_401_before_any_query_check(client: TestClient) -> None:
    """A key sent as ``?api_key=`` is told where keys go, not that api_key is an unknown parameter."""
    response = client.get("/banks", params={"api_key": "ism_x"})
    assert response.status_code == 401 and "X-API-Key header" in response.json()["detail"]
    response = client.get("/banks", params={"api_key": "ism_x"}, headers={"X-API-Key": "ism_not-a-key"})
    assert response.status_code == 401 and "revoked" in response.json()["detail"]
