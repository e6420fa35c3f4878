"""API keys on the bank, review and release routes: missing, unknown and revoked keys get 401;
provider keys in the server's environment never appear in a response or a log line."""

from __future__ import annotations

import json
import logging
import re
import secrets

import pytest

from itemsmith.service.auth import create_key, revoke_key
from itemsmith.service.jobs import execute_job, get_job
from itemsmith.templates_bank.storage import open_session

MY_PREFIXES = ("/banks", "/templates", "/releases", "/exports")


def my_routes(app) -> list[tuple[str, str]]:
    """(method, concrete path) of every operation of this module's resources, ids set to 1."""
    return [(method.upper(), re.sub(r"\{[^}]+\}", "1", path))
            for path, operations in app.openapi()["paths"].items() if path.startswith(MY_PREFIXES)
            for method in operations]


def test_every_route_is_covered(app) -> None:
    expected = {("POST", "/banks"), ("GET", "/banks"), ("GET", "/banks/1"), ("GET", "/banks/1/templates"),
                ("GET", "/templates/1"), ("GET", "/templates/1/items/1/plot.png"), ("POST", "/templates/1/review"),
                ("POST", "/templates/1/edit"), ("POST", "/banks/1/releases"), ("GET", "/banks/1/releases"),
                ("GET", "/releases/1"), ("POST", "/releases/1/exports"), ("POST", "/releases/1/reverify"),
                ("GET", "/releases/1/reverifications"), ("POST", "/releases/1/evaluations"),
                ("GET", "/releases/1/evaluations"), ("POST", "/banks/imports"), ("POST", "/banks/1/imports"),
                ("POST", "/releases/1/audits"), ("GET", "/releases/1/audits"), ("POST", "/releases/1/verifications"),
                ("GET", "/releases/1/verifications")}
    assert expected <= set(my_routes(app))


def test_a_request_without_a_key_gets_401_with_a_message(app, client) -> None:
    for method, path in my_routes(app):
        response = client.request(method, path)
        assert response.status_code == 401, (method, path, response.text)
        assert "missing API key" in response.json()["detail"]
        assert response.headers["www-authenticate"] == "APIKey"


def test_unknown_and_revoked_keys_get_401(app, client, engine) -> None:
    with open_session(engine) as session:
        key, record = create_key(session, "alice")
        revoke_key(session, record.id)
    for bad in (key, "ism_" + secrets.token_urlsafe(32), ""):
        for method, path in my_routes(app):
            response = client.request(method, path, headers={"X-API-Key": bad})
            assert response.status_code == 401, (method, path, response.text)


def test_the_review_pages_cookie_alone_is_no_key_for_the_rest_api(app, client, api_key, seeded) -> None:
    """A browser sends the cookie with a cross-site request; the REST API answers only the header."""
    client.cookies.set("itemsmith_key", api_key)
    for method, path in [*my_routes(app), ("GET", f"/banks/{seeded.bank.id}")]:
        response = client.request(method, path)
        assert response.status_code == 401, (method, path, response.text)
    posted = client.post("/banks", data={"name": "by-cookie", "task": "trends", "handler": "synthetic"})
    assert posted.status_code == 401
    assert client.get(f"/banks/{seeded.bank.id}", headers={"X-API-Key": api_key}).status_code == 200


def _run(engine, api_settings, job_id: str) -> dict:
    """Run a queued job here, as a worker would; its result."""
    assert execute_job(engine, job_id, worker="test", settings=api_settings) == "succeeded"
    with open_session(engine) as session:
        return get_job(session, job_id).result


PROVIDER_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_OPENAI_API_KEY", "ITEMSMITH_ANTHROPIC_API_KEY",
                "VLLM_KEY")


def test_provider_keys_in_the_environment_never_reach_a_response_or_a_log(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, client, api_key, seeded, engine,
        api_settings) -> None:
    canary = "sk-canary-" + secrets.token_hex(16)
    for name in PROVIDER_ENV:
        monkeypatch.setenv(name, canary)
    monkeypatch.setenv("ITEMSMITH_ENDPOINTS",
                       json.dumps({"vllm": {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "VLLM_KEY"}}))
    caplog.set_level(logging.DEBUG)
    headers = {"X-API-Key": api_key}
    settings = {"generator": "openai:gpt-4o", "judges": ["anthropic:claude-sonnet-4-5"],
                "students": ["openai_compatible:m@vllm@1"]}
    responses = [client.post("/banks", data={"name": "hosted", "task": "trends", "handler": "synthetic",
                                             "settings": json.dumps(settings)}, headers=headers),
                 client.post("/banks", data={"name": "bad", "task": "trends", "handler": "synthetic",
                                             "settings": json.dumps({"api_key": canary})}, headers=headers)]
    release_job = client.post(f"/banks/{seeded.bank.id}/releases", json={}, headers=headers)
    responses.append(release_job)
    release_id = _run(engine, api_settings, release_job.json()["id"])["release_id"]
    export_job = client.post(f"/releases/{release_id}/exports", params={"format": "jsonl"}, headers=headers)
    responses.append(export_job)
    _run(engine, api_settings, export_job.json()["id"])
    responses += [
        client.get("/banks", headers=headers),
        client.get(f"/banks/{seeded.bank.id}/templates", headers=headers),
        client.get(f"/templates/{seeded.accepted.id}", headers=headers),
        client.post(f"/releases/{release_id}/reverify", json={"judges": ["openai:gpt-4o"]}, headers=headers),
        client.post(f"/releases/{release_id}/evaluations", json={"model": "anthropic:claude-sonnet-4-5"},
                    headers=headers),
        client.get(f"/releases/{release_id}/reverifications", headers=headers),
        client.get(f"/releases/{release_id}/evaluations", headers=headers),
        client.get(f"/exports/{export_job.json()['id']}", headers=headers),
    ]
    assert [r.status_code for r in responses] == [202, 422, 202, 202, 200, 200, 200, 202, 202, 200, 200, 200]
    for response in responses:
        assert canary.encode() not in response.content
        assert all(canary not in value for value in response.headers.values())
    assert canary not in caplog.text
