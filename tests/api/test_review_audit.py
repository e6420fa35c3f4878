"""The review page shows the item audit's verdict: passed or failed, each shortcut with its
accuracy against chance, failed checks, the confirmation of a solver's win, and thresholds a user
lowered."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.items.schema import AuditFinding, AuditReport, AuditSolverResult, ItemPool
from itemsmith.templates_bank.storage import list_verdicts, open_session, record_verdict

from .test_review_page import _login


def _failed_audit() -> AuditReport:
    shortcut = AuditSolverResult(solver="numeric_rank", applicable=240, correct=240, accuracy=1.0, chance=0.25,
                                 p_value=1e-40, p_corrected=8e-40, gain=0.75, tested=True, shortcut=True,
                                 detail="the key is rank 2 of 4 (from the smallest) numeric option in 100% of items")
    fine = AuditSolverResult(solver="position", applicable=240, correct=61, accuracy=61 / 240, chance=0.25,
                             p_value=0.5, p_corrected=1.0, gain=0.004, tested=True, shortcut=False)
    return AuditReport(passed=False, solvers=[shortcut, fine], n_items=240, n_distinct=236, seeds=[7, 8], sizes=[30, 30],
                       confirmation_seeds=[9, 10], confirmation_sizes=[30, 30],
                       findings=[AuditFinding(check="option_count", passed=False, message="120 items have 3 options"),
                                 AuditFinding(check="duplicate_items", passed=True, message="none")],
                       feedback="shortcut 'numeric_rank' ...", thresholds_lowered=["alpha=0.001 (default 0.01)"],
                       elapsed_ms=812.0, pool=ItemPool(items=240, distinct=236, distinct_series=230, records=12,
                                                        estimated_size=310, recurring_keys=0.4, small=True))


def test_template_page_shows_the_audit_verdict(client: TestClient, engine: Engine, api_key: str, seeded) -> None:
    with open_session(engine) as session:
        record_verdict(session, seeded.declined.id, _failed_audit(), run_id="audit-run")
        stored = [v for v in list_verdicts(session, seeded.declined.id) if v.stage == "audit"]
    assert len(stored) == 1 and isinstance(stored[0].record, AuditReport) and stored[0].record.shortcuts == ["numeric_rank"]
    _login(client, api_key)
    text = client.get(f"/review/templates/{seeded.declined.id}").text
    assert "<td>audit</td>" in text and "failed</strong>" in text and "240 items (236 distinct)" in text
    assert "shortcut <strong>numeric_rank</strong>: 100% right blind vs 25% chance" in text
    assert "rank 2 of 4" in text and "wrong · option_count: 120 items have 3 options" in text
    assert "item pool: 236 distinct of 240 drawn from 12 record(s); about 310 different items" in text
    assert "small: fresh-instance evaluation repeats items" in text
    assert "thresholds lowered: alpha=0.001 (default 0.01)" in text
    assert "a blind solver's win re-tested with 2 fresh seeds added" in text
    assert "shortcut <strong>position</strong>" not in text and "duplicate_items" not in text
