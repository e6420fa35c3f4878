"""The review page of an imported (static) group: its stored items and their plots (no sandbox run
of the source: it is JSON), and its static audit with each test's power."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.templates_bank.static_items import import_items
from itemsmith.templates_bank.storage import get_bank, list_versions, open_session

from ..templates_bank.test_static_items import write_tse
from .conftest import OWNER
from .test_review_page import _login


def test_static_group_page_shows_stored_items_plots_and_the_audit_with_power(client: TestClient, engine: Engine,
                                                                             api_key: str, tmp_path: Path) -> None:
    source = write_tse(tmp_path / "qa_dataset.json")
    with open_session(engine) as session:
        import_items(session, "exam", str(source), "tse", owner=OWNER, created_by="tests")
        version = list_versions(session, get_bank(session, "exam", OWNER).id)[2]
    _login(client, api_key)
    page = client.get(f"/review/templates/{version.id}")
    assert page.status_code == 200
    text = page.text
    first = json.loads(source.read_text())[16]
    assert first["question"].replace("?", "") in text.replace("?", "")  # a stored item, not a sandbox error
    assert "blind solvers on these 8 items, with each test's power" in text
    assert "least_keyed:" in text and "power" in text
    plot = client.get(f"/review/templates/{version.id}/items/0/plot.png")
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"


def test_bank_page_shows_the_audit_by_category_and_the_diversity_of_a_static_bank(client: TestClient, engine: Engine,
                                                                                 api_key: str, tmp_path: Path) -> None:
    from itemsmith.service.review import audits_by_category

    source = write_tse(tmp_path / "qa_dataset.json")
    rows = json.loads(source.read_text())
    rows += [dict(rows[0]), dict(rows[1])]  # two exact copies in Pattern Recognition (tid 1)
    source.write_text(json.dumps(rows))
    with open_session(engine) as session:
        import_items(session, "exam", str(source), "tse", owner=OWNER, created_by="tests")
        bank = get_bank(session, "exam", OWNER)
        audits = {a.category: a for a in audits_by_category(session, bank.id)}
    assert set(audits) == {"Pattern Recognition", "Anomaly Detection", "Causality Analysis"}
    assert audits["Pattern Recognition"].items == 10 and audits["Pattern Recognition"].failing == 1
    assert audits["Pattern Recognition"].failed_checks["duplicate_items"] == 1
    assert "duplicate_items" not in audits["Anomaly Detection"].failed_checks
    _login(client, api_key)
    text = client.get(f"/review/banks/{bank.id}").text
    assert 'id="audit-by-category"' in text and "duplicate_items 1" in text
    assert "Diversity of 3 releasable templates" in text
