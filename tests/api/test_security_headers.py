"""Finding 4 and the offline ``/docs`` of the service's security review: no page may be framed or
run a script from elsewhere, ``/docs`` needs nothing from the internet, review forms and the login
form check their token and an Origin of the same scheme, host AND port, and a JSON body over its
cap is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.api.web.login import COOKIE_NAME
from itemsmith.templates_bank.storage import list_reviews, open_session

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def _assert_not_frameable(response) -> None:  # an httpx response
    assert response.headers["x-frame-options"] == "DENY"
    csp = response.headers["content-security-policy"]
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["frame-ancestors"] == ["'none'"] and directives["script-src"] == ["'self'"]
    assert "'unsafe-inline'" not in directives["script-src"] and directives["default-src"] == ["'self'"]


def _login_token(client: TestClient) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/review/login").text)
    assert match, "the login form carries no token"
    return match.group(1)


def _login(client: TestClient, key: str) -> None:
    response = client.post("/review/login", data={"api_key": key, "csrf_token": _login_token(client)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def test_every_html_page_and_every_other_response_forbids_framing_and_foreign_scripts(client: TestClient,
                                                                                      api_key: str, seeded) -> None:
    pages = [client.get("/review/login"), client.get("/docs"), client.get("/review/templates/999999")]
    _login(client, api_key)
    pages += [client.get("/review"), client.get(f"/review/banks/{seeded.bank.id}"),
              client.get("/review/templates/999999")]
    for page in pages:
        assert page.headers["content-type"].startswith("text/html"), page.url
        _assert_not_frameable(page)
    others = [client.get("/health"), client.get("/openapi.json"), client.get("/banks"),
              client.get("/banks", headers={"X-API-Key": api_key})]
    for response in others:
        _assert_not_frameable(response)
        assert response.headers["x-content-type-options"] == "nosniff"


def test_docs_reference_only_assets_of_this_server_and_they_are_served(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert urls and all(url.startswith("/docs/assets/") for url in urls), urls
    assert "<script>" not in page.text  # no inline script: the CSP would block it
    for url in urls:
        asset = client.get(url)
        assert asset.status_code == 200 and len(asset.content) > 100, url
    assert "SwaggerUIBundle" in client.get("/docs/assets/swagger-ui-bundle.js").text
    assert '"/openapi.json"' in client.get("/docs/assets/start.js").text
    assert client.get("/openapi.json").status_code == 200
    for name in ("index.html", "..%2F..%2Fswagger_ui_bundle%2F__init__.py", "nosuch.js"):
        assert client.get(f"/docs/assets/{name}").status_code == 404
    assert client.get("/redoc").status_code == 404  # ReDoc would load from a CDN


# --- review forms: token and exact origin -----------------------------------------------------


def _decision_token(client: TestClient, version_id: int) -> str:
    match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', client.get(f"/review/templates/{version_id}").text)
    assert match
    return match.group(1)


@pytest.mark.parametrize(("headers", "status"), [
    ({"Origin": "http://testserver:8001"}, 403),  # same host, another port: the finding
    ({"Origin": "https://testserver"}, 403),  # another scheme
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "null"}, 403),
    ({"Referer": "http://testserver:8001/attack.html"}, 403),  # no Origin: the Referer decides
    ({"Origin": "http://testserver:80"}, 303),  # the default port spelled out is the same origin
    ({"Origin": "http://TESTSERVER"}, 303),
    ({"Referer": "http://testserver/review/templates/1"}, 303),
])
def test_a_decision_needs_an_origin_of_the_same_scheme_host_and_port(client: TestClient, engine: Engine,
                                                                     api_key: str, seeded, headers: dict,
                                                                     status: int) -> None:
    _login(client, api_key)
    token = _decision_token(client, seeded.pending.id)
    response = client.post(f"/review/templates/{seeded.pending.id}/decision",
                           data={"decision": "approve", "csrf_token": token}, headers=headers, follow_redirects=False)
    assert response.status_code == status, response.text
    with open_session(engine) as session:
        assert len(list_reviews(session, seeded.pending.id)) == (1 if status == 303 else 0)


def test_login_needs_the_token_of_its_own_form_and_the_same_origin(client: TestClient, api_key: str) -> None:
    def attempt(data: dict, headers: dict | None = None) -> int:
        response = client.post("/review/login", data={"api_key": api_key, **data}, headers=headers or {},
                               follow_redirects=False)
        assert (f"{COOKIE_NAME}=" in response.headers.get("set-cookie", "")) == (response.status_code == 303)
        return response.status_code

    assert attempt({}) == 403  # no token
    token = _login_token(client)
    assert attempt({"csrf_token": ("y" if token[0] == "x" else "x") + token[1:]}) == 403  # one character changed
    assert attempt({"csrf_token": token}, {"Origin": "http://testserver:8001"}) == 403
    client.cookies.delete("itemsmith_login", path="/review/login")
    assert attempt({"csrf_token": token}) == 403  # a token without its cookie (copied from another browser)
    assert attempt({"csrf_token": "é" * 10}) == 403  # not ASCII: refused, not a crash
    assert attempt({"csrf_token": _login_token(client)}, {"Origin": "http://testserver"}) == 303


def test_a_json_body_over_its_cap_is_refused_after_authentication(client: TestClient, api_key: str, app: FastAPI,
                                                                  seeded) -> None:
    cap = app.state.settings.max_request_bytes
    body = b'{"note": "' + b"x" * cap + b'"}'
    url = f"/templates/{seeded.pending.id}/review"
    assert client.post(url, content=body, headers={"content-type": "application/json"}).status_code == 401
    response = client.post(url, content=body, headers={"content-type": "application/json", "X-API-Key": api_key})
    assert response.status_code == 413 and str(cap) in response.json()["detail"]
    chunked = client.post(url, content=iter([body[:1000], body[1000:]]),
                          headers={"content-type": "application/json", "X-API-Key": api_key})
    assert chunked.status_code == 413


# --- /docs in a browser, offline, under the CSP -----------------------------------------------


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed")
def test_docs_render_in_a_browser_with_every_request_to_another_origin_blocked(live_server: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    foreign: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()

            def only_this_server(route) -> None:  # playwright's Route
                if route.request.url.startswith(live_server):
                    route.continue_()
                else:
                    foreign.append(route.request.url)
                    route.abort()

            page.route("**/*", only_this_server)
            errors: list[str] = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.goto(f"{live_server}/docs")
            expect(page.locator(".opblock-summary-path", has_text="/banks").first).to_be_visible(timeout=30_000)
        finally:
            browser.close()
    assert foreign == [] and not [e for e in errors if "Content Security Policy" in e], (foreign, errors)
