"""Review routes: the filtered listing, one template, item plots, approve/reject, edit-and-recheck."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, select

from itemsmith.items.schema import Template
from itemsmith.service.review import TemplateFilters, list_templates
from itemsmith.service.tables import JobRow
from itemsmith.templates_bank.storage import (
    add_template_version,
    get_engine,
    get_version,
    list_reviews,
    list_verdicts,
    list_versions,
    open_session,
    version_statuses,
)

SeededBank = Any  # tests/api/conftest.py: SeededBank

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def listing(client, key: str, bank_id: int, **params) -> dict:
    response = client.get(f"/banks/{bank_id}/templates", params=params, headers={"X-API-Key": key})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_listing_shows_every_version_with_status_stage_and_score(client, api_key, seeded: SeededBank) -> None:
    page = listing(client, api_key, seeded.bank.id)
    assert page["total"] == 5 and page["limit"] == 50 and page["offset"] == 0
    rows = {row["template_key"]: row for row in page["items"]}
    assert rows["exam_trend_direction"]["status"] == "approved"
    assert rows["argmax"]["status"] == "accepted" and rows["argmax"]["judge_score"] == pytest.approx(8.5)
    assert rows["argmax"]["decision_stage"] == "capability"
    assert rows["argmax_copy"]["status"] == "declined" and rows["argmax_copy"]["decision_stage"] == "judges"
    assert rows["argmax_copy"]["judge_score"] == pytest.approx(3.0)  # a missing score is not a zero
    assert rows["pending_one"]["status"] == "pending" and rows["pending_one"]["judge_score"] is None
    assert rows["rejected_one"]["status"] == "rejected"  # a person's review overrides the pipeline
    assert [row["id"] for row in page["items"]] == sorted(row["id"] for row in page["items"])


@pytest.mark.parametrize(("params", "keys"), [
    ({"status": "approved"}, ["exam_trend_direction"]),
    ({"status": "accepted"}, ["argmax"]),
    ({"status": "declined"}, ["argmax_copy"]),
    ({"status": "rejected"}, ["rejected_one"]),
    ({"status": "pending"}, ["pending_one"]),
    ({"stage": "judges"}, ["argmax_copy"]),
    ({"category": "other"}, ["pending_one"]),
    ({"min_score": 5}, ["argmax"]),
    ({"category": "math", "min_score": 2}, ["argmax", "argmax_copy"]),
])
def test_the_listing_filters(params: dict, keys: list[str], client, api_key, seeded: SeededBank) -> None:
    page = listing(client, api_key, seeded.bank.id, **params)
    assert [row["template_key"] for row in page["items"]] == keys and page["total"] == len(keys)


def test_the_listing_pages_with_a_total(client, api_key, seeded: SeededBank) -> None:
    everything = [row["id"] for row in listing(client, api_key, seeded.bank.id)["items"]]
    first = listing(client, api_key, seeded.bank.id, limit=2)
    second = listing(client, api_key, seeded.bank.id, limit=2, offset=2)
    beyond = listing(client, api_key, seeded.bank.id, limit=2, offset=10)
    assert first["total"] == second["total"] == beyond["total"] == 5
    assert [r["id"] for r in first["items"] + second["items"]] == everything[:4] and beyond["items"] == []


@pytest.mark.parametrize("params", [{"status": "great"}, {"limit": 0}, {"limit": 501}, {"offset": -1},
                                    {"min_score": 11}, {"stage": "nope"}, {"unknown": "x"}])
def test_bad_listing_filters_get_422(params: dict, client, api_key, seeded: SeededBank) -> None:
    response = client.get(f"/banks/{seeded.bank.id}/templates", params=params, headers={"X-API-Key": api_key})
    assert response.status_code == 422


def test_a_template_with_its_verdicts_reviews_and_sample_items(client, api_key, seeded: SeededBank) -> None:
    response = client.get(f"/templates/{seeded.declined.id}", params={"n": 2, "seed": 3},
                          headers={"X-API-Key": api_key})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["version"]["source"] == seeded.declined.source and body["status"] == "declined"
    assert [v["stage"] for v in body["verdicts"]] == ["judge", "judge", "decision"]
    assert body["verdicts"][2]["payload"]["reasons"] == ["relevance below 5"]
    assert body["reviews"] == [] and body["irt"] is None and body["responses"] == []
    assert body["samples_error"] is None and body["samples_seed"] == 3 and len(body["samples"]) == 2
    assert body["samples"][0]["question"] == "At which index is the series highest?"
    again = client.get(f"/templates/{seeded.declined.id}", params={"n": 2, "seed": 3}, headers={"X-API-Key": api_key})
    assert again.json()["samples"] == body["samples"]  # same seed, same items
    accepted = client.get(f"/templates/{seeded.accepted.id}", params={"n": 1}, headers={"X-API-Key": api_key}).json()
    assert accepted["irt"]["discrimination"] == 1.2 and accepted["irt"]["difficulty_se"] == 0.2
    assert [(r["model"], r["raw"], r["correct"]) for r in accepted["responses"]] == [("student-a", "Answer: B", True)]
    approved = client.get(f"/templates/{seeded.approved.id}", headers={"X-API-Key": api_key}).json()
    assert approved["status"] == "approved" and approved["reviews"][0]["reviewer"] == "curator"


def test_a_template_that_fails_in_the_sandbox_is_shown_with_its_error(client, api_key, engine, seeded: SeededBank):
    with open_session(engine) as session:
        broken = add_template_version(session, seeded.bank.id, Template(
            id="broken", source="def question(num_samples):\n    return 1 / 0\n", title="broken", category="math",
            handler="synthetic"), created_by="job")
    body = client.get(f"/templates/{broken.id}", headers={"X-API-Key": api_key}).json()
    assert body["samples"] == [] and "ZeroDivisionError" in body["samples_error"]
    plot = client.get(f"/templates/{broken.id}/items/0/plot.png", headers={"X-API-Key": api_key})
    assert plot.status_code == 422 and "ZeroDivisionError" in plot.json()["detail"]


def test_an_item_plot_is_a_cacheable_png(client, api_key, seeded: SeededBank) -> None:
    url = f"/templates/{seeded.accepted.id}/items/1/plot.png"
    response = client.get(url, params={"seed": 2}, headers={"X-API-Key": api_key})
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert response.content.startswith(PNG_MAGIC)
    assert "max-age" in response.headers["cache-control"] and response.headers["etag"]
    same = client.get(url, params={"seed": 2}, headers={"X-API-Key": api_key})
    assert same.content == response.content and same.headers["etag"] == response.headers["etag"]
    other_seed = client.get(url, params={"seed": 5}, headers={"X-API-Key": api_key})
    assert other_seed.headers["etag"] != response.headers["etag"]
    cached = client.get(url, params={"seed": 2},
                        headers={"X-API-Key": api_key, "If-None-Match": response.headers["etag"]})
    assert cached.status_code == 304 and cached.content == b""


def test_plot_index_bounds(client, api_key, seeded: SeededBank) -> None:
    response = client.get(f"/templates/{seeded.accepted.id}/items/100/plot.png", headers={"X-API-Key": api_key})
    assert response.status_code == 422


def test_approve_and_reject_are_stored_with_who_and_why(client, api_key, engine, seeded: SeededBank) -> None:
    url = f"/templates/{seeded.declined.id}/review"
    approve = client.post(url, json={"decision": "approve", "note": "fine after all"}, headers={"X-API-Key": api_key})
    assert approve.status_code == 201, approve.text
    assert approve.json()["decision"] == "approve" and approve.json()["reviewer"].startswith("alice (key ")
    rows = listing(client, api_key, seeded.bank.id, status="approved")["items"]
    assert seeded.declined.id in [row["id"] for row in rows]
    reject = client.post(url, json={"decision": "reject"}, headers={"X-API-Key": api_key})
    assert reject.status_code == 201
    with open_session(engine) as session:
        assert [(r.decision, r.note) for r in list_reviews(session, seeded.declined.id)] == [
            ("approve", "fine after all"), ("reject", "")]
    assert client.get(f"/templates/{seeded.declined.id}", headers={"X-API-Key": api_key}).json()["status"] == "rejected"


@pytest.mark.parametrize("body", [{"decision": "maybe"}, {}, {"decision": "approve", "reviewer": "mallory"}])
def test_bad_reviews_get_422(body: dict, client, api_key, engine, seeded: SeededBank) -> None:
    response = client.post(f"/templates/{seeded.pending.id}/review", json=body, headers={"X-API-Key": api_key})
    assert response.status_code == 422
    with open_session(engine) as session:
        assert list_reviews(session, seeded.pending.id) == []


def test_an_edit_is_a_new_version_verified_again(client, api_key, engine, seeded: SeededBank, job_runner) -> None:
    source = seeded.source.replace("highest", "largest")
    response = client.post(f"/templates/{seeded.accepted.id}/edit", json={"source": source},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 202, response.text
    body = response.json()
    version, job = body["version"], body["job"]
    assert version["parent_version_id"] == seeded.accepted.id and version["template_key"] == "argmax"
    assert version["source"] == source and version["provenance"]["origin"] == "user"
    assert version["created_by"].startswith("alice (key ")
    assert job["kind"] == "recheck" and job["status"] == "queued" and job_runner.dispatched == [job["id"]]
    with open_session(engine) as session:
        assert session.get(JobRow, job["id"]).request["version_id"] == version["id"]
        assert get_version(session, seeded.accepted.id).source == seeded.source  # the old version is kept
    latest = listing(client, api_key, seeded.bank.id, status="pending")["items"]
    assert [row["id"] for row in latest] == [seeded.pending.id, version["id"]]
    every = listing(client, api_key, seeded.bank.id, latest="false")
    assert every["total"] == 6


def test_an_edit_uses_the_banks_authoring_panel_unless_given(client, api_key, engine, seeded: SeededBank) -> None:
    with open_session(engine) as session:
        session.add(JobRow(id="a" * 32, kind="author", owner="alice", bank_id=seeded.bank.id, status="succeeded",
                           request={"judges": ["openai:gpt-4o"], "students": ["openai:gpt-4o-mini@1"]}, progress={}))
    first = client.post(f"/templates/{seeded.pending.id}/edit", json={"source": seeded.source + "\n# v2\n"},
                        headers={"X-API-Key": api_key}).json()
    given = client.post(f"/templates/{seeded.pending.id}/edit",
                        json={"source": seeded.source + "\n# v3\n", "judges": ["anthropic:claude-sonnet-4-5"],
                              "students": []}, headers={"X-API-Key": api_key}).json()
    with open_session(engine) as session:
        first_request = session.get(JobRow, first["job"]["id"]).request
        given_request = session.get(JobRow, given["job"]["id"]).request
    assert first_request["judges"] == ["openai:gpt-4o"]
    assert [(s["spec"], s["rank"]) for s in first_request["students"]] == [("openai:gpt-4o-mini", 1)]
    assert given_request["judges"] == ["anthropic:claude-sonnet-4-5"] and given_request["students"] == []


def test_an_edit_after_an_authoring_job_on_the_defaults_is_checked_on_the_defaults(client, api_key, engine,
                                                                                   seeded: SeededBank) -> None:
    """No authoring job: no panel (as before the defaults); one that ran the server's defaults
    (judges and students unset): the recheck leaves them unset too, so it runs the defaults."""
    def edit(marker: str) -> dict:
        job = client.post(f"/templates/{seeded.pending.id}/edit", json={"source": seeded.source + marker},
                          headers={"X-API-Key": api_key}).json()["job"]
        with open_session(engine) as session:
            return session.get(JobRow, job["id"]).request

    before = edit("\n# v2\n")
    assert before["judges"] == [] and before["students"] == []
    with open_session(engine) as session:
        session.add(JobRow(id="b" * 32, kind="author", owner="alice", bank_id=seeded.bank.id, status="succeeded",
                           request={"judges": None, "students": None}, progress={}))
    after = edit("\n# v3\n")
    assert after["judges"] is None and after["students"] is None


@pytest.mark.parametrize(("source", "message"), [
    ("def question(num_samples:\n    return []\n", "syntax error at line 1"),
    ("x = 1\n", "no top-level function question"),
    ("def question(n):\x00\n", "NUL (U+0000)"),  # refused with every text field (api.text_fields)
    ("(" * 5000 + ")" * 5000, ""),
    (None, "the same as this version"),  # None: the version's own source
])
def test_bad_edits_get_422_and_store_nothing(source: str | None, message: str, client, api_key, engine,
                                             seeded: SeededBank, job_runner) -> None:
    source = seeded.source if source is None else source
    response = client.post(f"/templates/{seeded.accepted.id}/edit", json={"source": source},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 422, response.text
    assert message in str(response.json()["detail"])
    with open_session(engine) as session:
        assert len(list_versions(session, seeded.bank.id)) == 5
    assert job_runner.dispatched == []


def test_an_edit_that_copies_another_template_gets_409(client, api_key, seeded: SeededBank) -> None:
    response = client.post(f"/templates/{seeded.accepted.id}/edit", json={"source": seeded.declined.source},
                           headers={"X-API-Key": api_key})
    assert response.status_code == 409 and "argmax_copy" in response.json()["detail"]


def _routes(seeded: SeededBank) -> list[tuple[str, str, dict | None]]:
    v = seeded.accepted.id
    return [("GET", f"/banks/{seeded.bank.id}/templates", None), ("GET", f"/templates/{v}", None),
            ("GET", f"/templates/{v}/items/0/plot.png", None),
            ("POST", f"/templates/{v}/review", {"decision": "approve"}),
            ("POST", f"/templates/{v}/edit", {"source": seeded.source + "\n# x\n"})]


def test_another_owners_templates_are_not_found(client, other_api_key, engine: Engine, seeded: SeededBank) -> None:
    for method, url, body in _routes(seeded):
        response = client.request(method, url, json=body, headers={"X-API-Key": other_api_key})
        assert response.status_code == 404, (url, response.text)
        assert "no " in response.json()["detail"]
    with open_session(engine) as session:
        assert len(list_reviews(session, seeded.accepted.id)) == 0
        assert len(list_versions(session, seeded.bank.id)) == 5


def test_unknown_ids_are_not_found(client, api_key, seeded: SeededBank) -> None:
    unknown = [("GET", "/banks/999999/templates", None), ("GET", "/templates/999999", None),
               ("GET", "/templates/999999/items/0/plot.png", None),
               ("POST", "/templates/999999/review", {"decision": "approve"}),
               ("POST", "/templates/999999/edit", {"source": seeded.source + "\n# x\n"})]
    for method, url, body in unknown:
        response = client.request(method, url, json=body, headers={"X-API-Key": api_key})
        assert response.status_code == 404, (url, response.text)


def test_the_listing_is_the_same_on_postgresql(migrated_postgres_url: str, seed_bank) -> None:
    """The listing's SQL (JSON fields, grouped subqueries) on PostgreSQL, against the storage's
    own status rule."""
    engine = get_engine(migrated_postgres_url)
    seeded = seed_bank(engine)
    with open_session(engine) as session:
        page = list_templates(session, seeded.bank.id, TemplateFilters())
        statuses = version_statuses(session, seeded.bank.id)
        scored = list_templates(session, seeded.bank.id, TemplateFilters(min_score=5, category="math"))
        judged = list_templates(session, seeded.bank.id, TemplateFilters(stage="judges", status="declined"))
    assert {row.id: row.status for row in page.items} == statuses
    assert [row.template_key for row in scored.items] == ["argmax"] and scored.items[0].judge_score == 8.5
    assert [row.template_key for row in judged.items] == ["argmax_copy"] and judged.total == 1


def test_reposting_the_same_edit_returns_its_version_and_job(client, api_key, engine, api_settings,
                                                             seeded: SeededBank, job_runner) -> None:
    """Idempotent edits: no second version, no second recheck job, no repeated verdicts."""
    from itemsmith.service.jobs import execute_job

    source = seeded.source.replace("highest", "largest")
    post = lambda: client.post(f"/templates/{seeded.accepted.id}/edit", json={"source": source},  # noqa: E731
                               headers={"X-API-Key": api_key})
    first = post()
    assert first.status_code == 202, first.text
    version_id, job_id = first.json()["version"]["id"], first.json()["job"]["id"]
    assert execute_job(engine, job_id, worker="test", settings=api_settings) == "succeeded"
    with open_session(engine) as session:
        verdicts = len(list_verdicts(session, version_id))
    assert verdicts >= 2  # the recheck's structure report and decision
    for _ in range(2):
        again = post()
        assert again.status_code == 202
        assert again.json()["version"]["id"] == version_id and again.json()["job"]["id"] == job_id
        assert again.json()["job"]["status"] == "succeeded"
    assert job_runner.dispatched == [job_id]
    with open_session(engine) as session:
        assert len(list_verdicts(session, version_id)) == verdicts
        assert len(list_versions(session, seeded.bank.id)) == 6
        assert len(session.scalars(select(JobRow).where(JobRow.kind == "recheck")).all()) == 1
