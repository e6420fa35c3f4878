"""The review listing reads per-version summaries maintained on write: the latest judge panel's
score (with every panel on request), ``stage=review``, and migration 0003's backfill."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete, text

from itemsmith.items.schema import Decision, JudgeScore, Provenance, Template
from itemsmith.templates_bank.storage import (
    ReviewCreate,
    TemplateSummaryCountRow,
    TemplateSummaryRow,
    add_template_version,
    downgrade,
    open_session,
    record_review,
    record_verdict,
    upgrade,
)

from .conftest import SeededBank


def _listing(client: TestClient, key: str, bank_id: int, query: str = "") -> dict[int, dict]:
    response = client.get(f"/banks/{bank_id}/templates?{query}", headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return {item["id"]: item for item in response.json()["items"]}


def test_judge_score_is_the_latest_panels_with_history_on_request(client, api_key, engine: Engine,
                                                                  seeded: SeededBank) -> None:
    version = seeded.accepted.id  # judged 8 and 9 by a panel without a run id
    assert _listing(client, api_key, seeded.bank.id)[version]["judge_score"] == 8.5
    with open_session(engine) as session:  # a re-verification: a new panel, scores 2 and 3
        for judge, score in (("judge-c", 2.0), ("judge-d", 3.0)):
            record_verdict(session, version, JudgeScore(judge=judge, criterion="relevance", score=score),
                           run_id="reverify-1")
    row = _listing(client, api_key, seeded.bank.id)[version]
    assert row["judge_score"] == 2.5 and row["judge_history"] is None  # not the mean of all four (5.5)
    assert row["status"] == "accepted"  # a re-verification does not flip the listing status
    assert version not in _listing(client, api_key, seeded.bank.id, "min_score=5")
    history = _listing(client, api_key, seeded.bank.id, "history=true")[version]["judge_history"]
    assert [(p["run_id"], p["score"], p["judges"]) for p in history] == [
        (None, 8.5, ["judge-a", "judge-b"]), ("reverify-1", 2.5, ["judge-c", "judge-d"])]


def test_stage_review_lists_the_versions_a_person_decided(client, api_key, engine: Engine,
                                                          seeded: SeededBank) -> None:
    assert set(_listing(client, api_key, seeded.bank.id, "stage=review")) == {seeded.approved.id, seeded.rejected.id}
    with open_session(engine) as session:
        record_review(session, seeded.pending.id, ReviewCreate(decision="approve", reviewer="carol"))
    reviewed = _listing(client, api_key, seeded.bank.id, "stage=review")
    assert set(reviewed) == {seeded.approved.id, seeded.rejected.id, seeded.pending.id}
    assert reviewed[seeded.pending.id]["status"] == "approved"
    assert set(_listing(client, api_key, seeded.bank.id, "stage=judges")) == {seeded.declined.id}


def test_a_summary_is_written_in_the_verdicts_transaction(engine: Engine, seeded: SeededBank) -> None:
    """A verdict whose transaction rolls back leaves the summary as it was."""
    before = _summary(engine, seeded.pending.id)
    try:
        with open_session(engine) as session:
            record_verdict(session, seeded.pending.id, JudgeScore(judge="j", criterion="relevance", score=1.0))
            assert session.get(TemplateSummaryRow, seeded.pending.id).judge_score == 1.0
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert _summary(engine, seeded.pending.id) == before


def _summary(engine: Engine, version_id: int) -> tuple:
    with engine.connect() as connection:
        return tuple(connection.execute(text("SELECT status, decision_stage, judge_score, judge_run "
                                             "FROM template_summaries WHERE version_id = :v"), {"v": version_id}).one())


def test_migration_0003_backfills_the_summaries(client, api_key, engine: Engine, seeded: SeededBank) -> None:
    def whole(query: str) -> dict:
        return client.get(f"/banks/{seeded.bank.id}/templates?{query}", headers={"X-API-Key": api_key}).json()

    expected = {query: whole(query) for query in ("latest=false", "", "status=accepted", "stage=review")}
    downgrade(engine, "0002")  # drops the summaries; the bank's rows stay
    with engine.connect() as connection:
        assert connection.scalar(text("SELECT to_regclass('template_summaries')") if engine.dialect.name ==
                                 "postgresql" else text("SELECT count(*) FROM sqlite_master "
                                                        "WHERE name = 'template_summaries'")) in (None, 0)
    upgrade(engine)
    assert {query: whole(query) for query in expected} == expected  # rows and totals (the counters)
    with open_session(engine) as session:  # and the listing reads them: without rows, nothing is listed
        session.execute(delete(TemplateSummaryCountRow))
        session.execute(delete(TemplateSummaryRow))
    assert _listing(client, api_key, seeded.bank.id, "latest=false") == {}


@pytest.mark.parametrize("query", ["", "latest=false", "status=accepted", "status=pending&latest=false",
                                   "category=math", "stage=review", "stage=capability&category=math",
                                   "min_score=5"])
def test_the_total_from_the_counters_is_the_number_of_matches(query: str, client, api_key, engine: Engine,
                                                              seeded: SeededBank) -> None:
    """After new versions (a newer version supersedes its template's newest), verdicts and reviews,
    the counted total equals the rows the listing returns: the counters move with every write."""
    with open_session(engine) as session:
        newer = add_template_version(session, seeded.bank.id, Template(
            id="argmax", source=seeded.source + "\n# v2\n", title="argmax v2", category="math",
            provenance=Provenance(origin="user", parent_hash=seeded.accepted.content_hash)), created_by="carol")
        record_verdict(session, newer.id, Decision(accepted=False, stage="structure"))
        record_review(session, newer.id, ReviewCreate(decision="approve", reviewer="carol"))
        record_verdict(session, seeded.pending.id, Decision(accepted=True, stage="capability"))
    response = client.get(f"/banks/{seeded.bank.id}/templates?limit=500&{query}", headers={"X-API-Key": api_key})
    assert response.status_code == 200
    page = response.json()
    assert page["total"] == len(page["items"])
    everything = client.get(f"/banks/{seeded.bank.id}/templates?limit=500&latest=false",
                            headers={"X-API-Key": api_key}).json()["items"]
    assert everything and page["total"] <= len(everything)
