"""The review page's bank view: templates the calibration flags for review are listed, and the
diversity of the releasable templates' stored items (near-duplicate pairs included) is shown."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.items.schema import IRTParameters, Item, RunStatus, StructureReport
from itemsmith.templates_bank.storage import open_session, record_verdict


def _items(stem: str, options: list[str]) -> list[Item]:
    return [Item(question=f"{stem} (case {i})?", options=options, answer_index=0) for i in range(3)]


def _login(client: TestClient, key: str) -> None:
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/review/login").text)
    assert token
    response = client.post("/review/login", data={"api_key": key, "next": "/review", "csrf_token": token.group(1)},
                           follow_redirects=False)
    assert response.status_code == 303, response.text


def test_bank_view_lists_flagged_templates_and_near_duplicates(client: TestClient, engine: Engine, api_key: str,
                                                               seeded) -> None:
    same = ["rising", "falling", "flat", "periodic"]
    with open_session(engine) as session:
        # the approved and the accepted template ask the same question: a near-duplicate pair
        for version in (seeded.approved, seeded.accepted):
            record_verdict(session, version.id, StructureReport(status=RunStatus.ok,
                                                                items=_items("Which trend does the series show", same)))
        record_verdict(session, seeded.accepted.id, IRTParameters(
            discrimination=0.2, difficulty=0.1, discrimination_se=0.3, difficulty_se=0.4,
            flags=["negative_discrimination", "near_zero_discrimination"]))
    _login(client, api_key)
    page = client.get(f"/review/banks/{seeded.bank.id}")
    assert page.status_code == 200
    flagged = re.search(r'<ul id="to-review">(.*?)</ul>', page.text, re.S)
    assert flagged and seeded.accepted.template_key in flagged.group(1)
    assert seeded.approved.template_key not in flagged.group(1) and "negative_discrimination" in flagged.group(1)
    pairs = re.search(r'<ul id="near-duplicates">(.*?)</ul>', page.text, re.S)
    assert pairs and seeded.approved.template_key in pairs.group(1) and seeded.accepted.template_key in pairs.group(1)
    assert "mean Levenshtein distance" in page.text and "embedder: text similarity only" in page.text


def test_bank_view_without_calibration_or_items_says_so(client: TestClient, api_key: str, seeded) -> None:
    _login(client, api_key)
    page = client.get(f"/review/banks/{seeded.bank.id}")
    assert page.status_code == 200
    assert "No calibrated template is flagged for review." in page.text  # the seeded IRT has no review flag
    assert "too few items to measure" in page.text and 'id="near-duplicates"' not in page.text
