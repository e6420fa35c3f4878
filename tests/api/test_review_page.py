"""The review page (api/web): login, banks, listing with filters, one template with sample items
and plots, decisions with CSRF checks, foreign records; and a browser test in headless Chromium
that logs in, sees a plot, approves a template and finds the decision in the database."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.api.web.login import COOKIE_NAME
from itemsmith.items.schema import IRTParameters
from itemsmith.templates_bank.storage import (
    BankCreate,
    create_bank,
    import_curated,
    list_reviews,
    open_session,
    record_verdict,
)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCREENSHOT = Path("/tmp/review_page.png")
LISTING_SCREENSHOT = Path("/tmp/review_listing.png")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _login_token(client: TestClient) -> str:
    """The login form's CSRF token (its cookie is now in the client)."""
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/review/login").text)
    assert match, "the login form carries no token"
    return match.group(1)


def _login(client: TestClient, key: str) -> None:
    response = client.post("/review/login", data={"api_key": key, "next": "/review", "csrf_token": _login_token(client)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def _form_token(client: TestClient, version_id: int) -> str:
    page = client.get(f"/review/templates/{version_id}")
    assert page.status_code == 200
    match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert match, "the decision form carries no token"
    return match.group(1)


@pytest.fixture
def foreign_bank(engine: Engine) -> tuple[int, int]:
    """A bank of bob's with one curated template: (bank id, version id)."""
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="bob-bank", handler="synthetic", owner="bob"))
        version = import_curated(session, bank.id, reviewer="bob", template_ids=["exam_pure_noise_tf"])[0]
    return bank.id, version.id


# --- login ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/review", "/review/banks/1", "/review/templates/1",
                                  "/review/templates/1/items/0/plot.png"])
def test_pages_redirect_to_login_without_a_cookie(client: TestClient, path: str) -> None:
    response = client.get(path, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"/review/login?next={path}"


def test_login_sets_an_httponly_strict_cookie_and_goes_back(client: TestClient, api_key: str) -> None:
    form = client.get("/review/login?next=/review/banks/1")
    assert form.status_code == 200 and 'name="api_key"' in form.text and 'value="/review/banks/1"' in form.text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)
    response = client.post("/review/login", data={"api_key": api_key, "next": "/review/banks/1", "csrf_token": token},
                           follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/review/banks/1"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_login_refuses_an_unknown_key_and_never_redirects_off_site(client: TestClient, api_key: str) -> None:
    bad = client.post("/review/login", data={"api_key": "ism_not-a-key", "csrf_token": _login_token(client)},
                      follow_redirects=False)
    assert bad.status_code == 401 and "Unknown or revoked API key" in bad.text
    assert f"{COOKIE_NAME}=" not in bad.headers.get("set-cookie", "")  # only a fresh login form token
    offsite = client.post("/review/login", data={"api_key": api_key, "next": "//evil.example/x",
                                                 "csrf_token": _login_token(client)}, follow_redirects=False)
    assert offsite.headers["location"] == "/review"


def test_logout_clears_the_cookie(client: TestClient, api_key: str) -> None:
    _login(client, api_key)
    response = client.get("/review/logout", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/review/login"
    assert client.get("/review", follow_redirects=False).status_code == 303


def test_review_pages_stay_out_of_the_openapi_schema_and_static_files_are_served(client: TestClient) -> None:
    assert not [path for path in client.get("/openapi.json").json()["paths"] if path.startswith("/review")]
    css = client.get("/review/static/review.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert "requestSubmit" in client.get("/review/static/review.js").text


# --- banks and listing ------------------------------------------------------------------------


def test_banks_page_lists_only_the_callers_banks(client: TestClient, api_key: str, seeded,
                                                 foreign_bank: tuple[int, int]) -> None:
    _login(client, api_key)
    page = client.get("/review")
    assert page.status_code == 200
    assert f'href="/review/banks/{seeded.bank.id}"' in page.text and "alice-bank" in page.text
    assert "bob-bank" not in page.text and f"/review/banks/{foreign_bank[0]}\"" not in page.text


def test_bank_listing_shows_status_judge_mean_irt_and_decision(client: TestClient, engine: Engine, api_key: str,
                                                               seeded) -> None:
    with open_session(engine) as session:
        record_verdict(session, seeded.accepted.id, IRTParameters(discrimination=1.25, difficulty=-0.5,
                                                                  discrimination_se=0.2, difficulty_se=0.1))
    _login(client, api_key)
    page = client.get(f"/review/banks/{seeded.bank.id}")
    assert page.status_code == 200
    rows = {int(m.group(1)): m.group(0) for m in re.finditer(r'href="/review/templates/(\d+)".*?</tr>', page.text,
                                                                re.S)}
    assert set(rows) == {seeded.approved.id, seeded.accepted.id, seeded.declined.id, seeded.pending.id,
                         seeded.rejected.id}
    accepted = rows[seeded.accepted.id]
    assert "badge accepted" in accepted and "8.50" in accepted  # mean of the judges' 8 and 9
    assert "1.25" in accepted and "-0.50" in accepted and "accepted at capability" in accepted
    assert "badge declined" in rows[seeded.declined.id] and "declined at judges" in rows[seeded.declined.id]
    assert "badge rejected" in rows[seeded.rejected.id] and "badge pending" in rows[seeded.pending.id]
    assert 'id="total">5 versions' in page.text


@pytest.mark.parametrize(("query", "expected"), [
    ("status=declined", {"declined"}),
    ("status=approved", {"approved"}),
    ("category=other", {"pending"}),
    ("stage=capability", {"accepted", "rejected"}),
    ("min_score=5", {"accepted"}),
    ("status=&stage=&category=&min_score=", {"approved", "accepted", "declined", "pending", "rejected"}),
])
def test_bank_listing_filters(client: TestClient, api_key: str, seeded, query: str, expected: set[str]) -> None:
    _login(client, api_key)
    page = client.get(f"/review/banks/{seeded.bank.id}?{query}")
    assert page.status_code == 200
    ids = {int(i) for i in re.findall(r'href="/review/templates/(\d+)"', page.text)}
    by_state = {"approved": seeded.approved.id, "accepted": seeded.accepted.id, "declined": seeded.declined.id,
                "pending": seeded.pending.id, "rejected": seeded.rejected.id}
    assert ids == {by_state[state] for state in expected}


def test_bank_listing_refuses_bad_filters_with_a_clear_4xx(client: TestClient, api_key: str, seeded) -> None:
    _login(client, api_key)
    for query in ("status=maybe", "min_score=11", "page=0", "min_score=abc"):
        response = client.get(f"/review/banks/{seeded.bank.id}?{query}")
        assert response.status_code == 422, query


# --- one template ----------------------------------------------------------------------------


def test_template_page_shows_source_items_plots_verdicts_and_history(client: TestClient, api_key: str,
                                                                    seeded) -> None:
    _login(client, api_key)
    page = client.get(f"/review/templates/{seeded.declined.id}")
    assert page.status_code == 200
    text = page.text
    assert "def question(num_samples)" in text and "# variant" in text
    assert "At which index is the series highest?" in text and 'class="correct"' in text
    plots = re.findall(r'src="(/review/templates/\d+/items/\d+/plot.png)"', text)
    assert plots == [f"/review/templates/{seeded.declined.id}/items/{i}/plot.png" for i in range(3)]
    assert "declined</strong> at judges" in text and "relevance below 5" in text and "unparsed" in text
    assert 'id="status">declined' in text and "Not calibrated yet." in text
    rejected = client.get(f"/review/templates/{seeded.rejected.id}").text
    assert "by carol" in rejected and "dull" in rejected


def test_item_plot_is_a_png_of_the_sample_item(client: TestClient, api_key: str, seeded) -> None:
    _login(client, api_key)
    png = client.get(f"/review/templates/{seeded.approved.id}/items/1/plot.png")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content.startswith(PNG_MAGIC) and len(png.content) > 1000
    assert client.get(f"/review/templates/{seeded.approved.id}/items/3/plot.png").status_code == 404
    assert client.get(f"/review/templates/{seeded.approved.id}/items/-1/plot.png").status_code == 422


def test_a_template_that_fails_in_the_sandbox_shows_its_error(client: TestClient, engine: Engine, api_key: str,
                                                             seeded) -> None:
    from itemsmith.items.schema import Provenance, Template
    from itemsmith.templates_bank.storage import add_template_version

    broken = Template(id="broken", source="def question(num_samples):\n    return 1 / 0\n", title="broken",
                      category="math", handler="synthetic", provenance=Provenance(origin="generated"))
    with open_session(engine) as session:
        version = add_template_version(session, seeded.bank.id, broken, created_by="job")
    _login(client, api_key)
    page = client.get(f"/review/templates/{version.id}")
    assert page.status_code == 200 and "The template did not run: error: ZeroDivisionError" in page.text
    assert client.get(f"/review/templates/{version.id}/items/0/plot.png").status_code == 404


# --- decisions -------------------------------------------------------------------------------


def test_approve_and_reject_are_stored_with_the_reviewer(client: TestClient, engine: Engine, api_key: str,
                                                         seeded) -> None:
    _login(client, api_key)
    token = _form_token(client, seeded.pending.id)
    response = client.post(f"/review/templates/{seeded.pending.id}/decision",
                           data={"decision": "approve", "note": " looks right ", "csrf_token": token},
                           follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"/review/templates/{seeded.pending.id}?decided=approve"
    client.post(f"/review/templates/{seeded.pending.id}/decision", data={"decision": "reject", "csrf_token": token})
    with open_session(engine) as session:
        reviews = list_reviews(session, seeded.pending.id)
    assert [(r.decision, r.note) for r in reviews] == [("approve", "looks right"), ("reject", "")]
    assert all(r.reviewer.startswith("alice") for r in reviews)
    page = client.get(f"/review/templates/{seeded.pending.id}?decided=reject").text
    assert "Recorded: rejected." in page and 'id="status">rejected' in page


@pytest.mark.parametrize(("data", "headers", "status"), [
    ({"decision": "approve"}, {}, 422),  # no token
    ({"decision": "approve", "csrf_token": "0" * 64}, {}, 403),
    ({"decision": "approve", "csrf_token": None}, {"Origin": "https://evil.example"}, 403),
    ({"decision": "maybe", "csrf_token": None}, {}, 422),
    ({"decision": "approve", "csrf_token": None, "note": "x" * 2001}, {}, 422),
])
def test_decisions_without_a_valid_form_are_refused_and_nothing_is_stored(
        client: TestClient, engine: Engine, api_key: str, seeded, data: dict, headers: dict, status: int) -> None:
    _login(client, api_key)
    if data.get("csrf_token", "") is None:
        data = {**data, "csrf_token": _form_token(client, seeded.pending.id)}
    response = client.post(f"/review/templates/{seeded.pending.id}/decision", data=data, headers=headers,
                           follow_redirects=False)
    assert response.status_code == status
    with open_session(engine) as session:
        assert list_reviews(session, seeded.pending.id) == []


def test_a_same_origin_decision_passes_the_origin_check(client: TestClient, engine: Engine, api_key: str,
                                                        seeded) -> None:
    _login(client, api_key)
    token = _form_token(client, seeded.pending.id)
    response = client.post(f"/review/templates/{seeded.pending.id}/decision",
                           data={"decision": "approve", "csrf_token": token},
                           headers={"Origin": "http://testserver"}, follow_redirects=False)
    assert response.status_code == 303
    with open_session(engine) as session:
        assert [r.decision for r in list_reviews(session, seeded.pending.id)] == ["approve"]


# --- other owners' records -------------------------------------------------------------------


def test_foreign_and_unknown_records_are_404(client: TestClient, engine: Engine, api_key: str, seeded,
                                             foreign_bank: tuple[int, int]) -> None:
    bank_id, version_id = foreign_bank
    _login(client, api_key)
    token = _form_token(client, seeded.pending.id)
    for path in (f"/review/banks/{bank_id}", f"/review/templates/{version_id}",
                 f"/review/templates/{version_id}/items/0/plot.png", "/review/banks/999999",
                 "/review/templates/999999"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "exam_pure_noise_tf" not in response.text
    decision = client.post(f"/review/templates/{version_id}/decision",
                           data={"decision": "reject", "csrf_token": token})
    assert decision.status_code == 404
    with open_session(engine) as session:
        assert [r.reviewer for r in list_reviews(session, version_id)] == ["bob"]  # only the import's approval


# --- the browser -----------------------------------------------------------------------------


@pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                    reason="Debian's chromium is not installed (under CI this test always runs)")
def test_browser_logs_in_sees_a_plot_approves_and_the_decision_is_stored(live_server: str, engine: Engine,
                                                                         api_key: str, seeded) -> None:
    from playwright.sync_api import expect, sync_playwright

    with open_session(engine) as session:
        record_verdict(session, seeded.pending.id, IRTParameters(discrimination=0.9, difficulty=0.3,
                                                                 discrimination_se=0.2, difficulty_se=0.15))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(f"{live_server}/review")
            assert page.url.startswith(f"{live_server}/review/login")
            page.fill("#api_key", api_key)
            page.click("button[type=submit]")
            page.wait_for_url(f"{live_server}/review")
            page.click("text=alice-bank")
            page.wait_for_url(f"{live_server}/review/banks/{seeded.bank.id}")
            page.screenshot(path=str(LISTING_SCREENSHOT), full_page=True)
            page.select_option("select[name=status]", "pending")  # the page's script submits on change
            page.wait_for_url(re.compile(r".*status=pending.*"))
            expect(page.locator("#templates tbody tr")).to_have_count(1)
            page.click(f"a[href='/review/templates/{seeded.pending.id}']")
            page.wait_for_url(f"{live_server}/review/templates/{seeded.pending.id}")

            plot = page.locator("img.plot").first
            expect(plot).to_be_visible()
            plot.scroll_into_view_if_needed()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=plot.element_handle(),
                                   timeout=30_000)
            assert plot.evaluate("img => img.naturalWidth") == 600  # plotting: 6 in x 100 dpi
            expect(page.locator("#status")).to_have_text("pending")

            page.fill("#note", "checked in the browser")
            page.screenshot(path=str(SCREENSHOT), full_page=True)
            page.click("button.approve")
            page.wait_for_url(re.compile(r".*decided=approve$"))
            expect(page.locator("#status")).to_have_text("approved")
            expect(page.locator("#reviews")).to_contain_text("checked in the browser")
        finally:
            browser.close()
    with open_session(engine) as session:
        reviews = list_reviews(session, seeded.pending.id)
    assert [(r.decision, r.note) for r in reviews] == [("approve", "checked in the browser")]
    assert reviews[0].reviewer.startswith("alice")


# --- cross-site request forgery from another port of the same host, in the browser ----------------

_HOSTILE_PAGE = """<!doctype html><html><head><title>cute cats</title></head><body>
<form id="approve" method="post" action="{server}/review/templates/{version}/decision">
  <input type="hidden" name="decision" value="approve"><input type="hidden" name="csrf_token" value="guess">
</form>
<script>
const server = "{server}", options = {{method: "POST", mode: "no-cors", credentials: "include"}};
const bank = new FormData();
bank.append("name", "forged"); bank.append("task", "forged task"); bank.append("handler", "synthetic");
const attacks = [
  fetch(server + "/banks", {{...options, body: bank}}),
  fetch(server + "/templates/{version}/review", {{...options, body: JSON.stringify({{decision: "approve"}})}}),
  fetch(server + "/templates/{version}/edit", {{...options, body: JSON.stringify({{source: "x = 1"}})}}),
  fetch(server + "/review/templates/{version}/decision",
        {{...options, body: new URLSearchParams({{decision: "approve", csrf_token: "guess"}})}}),
];
Promise.allSettled(attacks).then(() => document.getElementById("approve").submit());
</script></body></html>"""


@pytest.fixture
def hostile_site() -> Iterator[tuple[str, dict[str, str]]]:
    """A page served from another port of 127.0.0.1; the test fills its content."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    content: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            body = content.get("page", "").encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", content
    finally:
        server.shutdown()
        server.server_close()


def _state(engine: Engine, version_id: int) -> tuple[list[str], int, int]:
    from sqlalchemy import func, select

    from itemsmith.service.tables import JobRow
    from itemsmith.templates_bank.storage import BankRow

    with open_session(engine) as session:
        return (sorted(session.scalars(select(BankRow.name))), session.scalar(select(func.count(JobRow.id))),
                len(list_reviews(session, version_id)))


@pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"),
                    reason="Debian's chromium is not installed (under CI this test always runs)")
def test_browser_a_page_on_another_port_cannot_act_with_the_reviewers_cookie(
        app: FastAPI, live_server: str, hostile_site: tuple[str, dict[str, str]], engine: Engine, api_key: str,
        seeded) -> None:
    from playwright.sync_api import sync_playwright

    seen: list[tuple[str, str, bool, str]] = []  # (method, path, the login cookie came along, Origin)
    inner = app.middleware_stack

    async def record(scope, receive, send) -> None:  # ASGI
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            seen.append((scope["method"], scope["path"], f"{COOKIE_NAME}=".encode() in headers.get(b"cookie", b""),
                         headers.get(b"origin", b"").decode()))
        await inner(scope, receive, send)

    hostile_url, content = hostile_site
    content["page"] = _HOSTILE_PAGE.format(server=live_server, version=seeded.pending.id)
    before = _state(engine, seeded.pending.id)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{live_server}/review/login")
            page.fill("#api_key", api_key)
            page.click("button[type=submit]")
            page.wait_for_url(f"{live_server}/review")
            app.middleware_stack = record  # from here on, every request the attack makes is seen
            with page.expect_navigation(url=f"{live_server}/review/templates/{seeded.pending.id}/decision") as nav:
                page.goto(f"{hostile_url}/cats.html")  # its script attacks, then submits the form at the top level
            assert nav.value is not None and nav.value.status == 403
        finally:
            app.middleware_stack = inner
            browser.close()
    attacks = sorted((method, path) for method, path, _, _ in seen if method == "POST")
    decision = ("POST", f"/review/templates/{seeded.pending.id}/decision")
    assert attacks == sorted([("POST", "/banks"), ("POST", f"/templates/{seeded.pending.id}/review"),
                              ("POST", f"/templates/{seeded.pending.id}/edit"), decision, decision]), seen
    # the browser did send the victim's cookie along (SameSite does not separate ports): the server refused anyway
    assert all(cookie and origin == hostile_url for method, _, cookie, origin in seen if method == "POST"), seen
    assert _state(engine, seeded.pending.id) == before
