"""Banks are named per owner, so a job resolves its bank by id, never by name alone. Bob
squatting alice's bank name (with a release of his own, of other templates) must not break or
redirect alice's ``evaluate`` and ``calibrate`` jobs; a job pointed at another owner's bank id finds
nothing."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import Engine

from itemsmith.api.settings import ApiSettings
from itemsmith.service.jobs import execute_job, get_job
from itemsmith.service.jobs._store import create_job
from itemsmith.templates_bank.releases import ReleaseCreate, create_release, get_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    NotFoundError,
    create_bank,
    import_curated,
    list_evaluation_responses,
    open_session,
)

from .conftest import OTHER_OWNER, OWNER

NAME = "alice-bank"


def _bank_with_release(engine: Engine, owner: str, templates: list[str]) -> tuple[int, list[int], str]:
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name=NAME, handler="synthetic", owner=owner))
        versions = import_curated(session, bank.id, reviewer="curator", template_ids=templates)
        release = create_release(session, ReleaseCreate(bank=NAME, owner=owner, seeds=[0], num_samples=3,
                                                        created_by="curator"))
    return bank.id, [v.id for v in versions], release.manifest.checksum


def _run(engine: Engine, settings: ApiSettings, kind: str, request: dict, bank_id: int, owner: str = OWNER):
    with open_session(engine) as session:
        job_id = create_job(session, kind=kind, owner=owner, request=request, bank_id=bank_id).id
    status = execute_job(engine, job_id, worker="w1", settings=settings)
    with open_session(engine) as session:
        return status, get_job(session, job_id)


def test_a_squatted_bank_name_breaks_neither_evaluate_nor_calibrate_of_the_owner(
        engine: Engine, api_settings: ApiSettings, tmp_path: Path) -> None:
    alice_bank, alice_versions, alice_checksum = _bank_with_release(engine, OWNER, ["exam_trend_direction"])
    bob_bank, bob_versions, bob_checksum = _bank_with_release(engine, OTHER_OWNER, ["feat_seasonality_classify"])
    assert alice_checksum != bob_checksum
    model = tmp_path / "model.json"
    model.write_text(json.dumps({"replies": ["Answer: A"]}))
    status, job = _run(engine, api_settings, "evaluate", {"bank": NAME, "release": 1, "model": f"scripted:{model}"},
                       alice_bank)
    assert status == "succeeded", job.error
    assert job.result["release_checksum"] == alice_checksum
    with open_session(engine) as session:
        assert len(list_evaluation_responses(session, version_ids=alice_versions)) == 3
        assert list_evaluation_responses(session, version_ids=bob_versions) == []
    status, job = _run(engine, api_settings, "calibrate", {"bank": NAME, "release": 1, "priors": True,
                                                           "min_respondents": 2}, alice_bank)
    assert status == "succeeded", job.error


def test_a_job_of_one_owner_on_another_owners_bank_id_finds_nothing(engine: Engine, api_settings: ApiSettings,
                                                                   tmp_path: Path) -> None:
    _bank_with_release(engine, OWNER, ["exam_trend_direction"])
    bob_bank, _, _ = _bank_with_release(engine, OTHER_OWNER, ["feat_seasonality_classify"])
    status, job = _run(engine, api_settings, "calibrate", {"bank": NAME, "release": 1, "priors": True}, bob_bank)
    assert status == "failed" and "is not bank" in job.error
    with open_session(engine) as session:
        try:
            get_release(session, "other-name", 1, bank_id=bob_bank)
        except NotFoundError as exc:
            assert "is not bank" in str(exc)
        else:
            raise AssertionError("a release looked up by a bank id of another name was found")
        assert get_release(session, NAME, 1, OTHER_OWNER, bank_id=bob_bank).bank_id == bob_bank


def test_the_operator_names_the_owner_of_a_squatted_name_as_owner_slash_bank(engine: Engine) -> None:
    from itemsmith.templates_bank.releases import parse_release_ref
    from itemsmith.templates_bank.storage import get_bank

    alice_bank, _, _ = _bank_with_release(engine, OWNER, ["exam_trend_direction"])
    bob_bank, _, _ = _bank_with_release(engine, OTHER_OWNER, ["feat_seasonality_classify"])
    with open_session(engine) as session:
        try:
            get_bank(session, NAME)
        except NotFoundError as exc:
            assert f"name the owner: OWNER/{NAME}" in str(exc)
        else:
            raise AssertionError("a name two owners use was resolved without an owner")
        assert get_bank(session, f"{OTHER_OWNER}/{NAME}").id == bob_bank
        assert parse_release_ref(f"{OWNER}/{NAME}@1") == (f"{OWNER}/{NAME}", 1)
        assert get_release(session, *parse_release_ref(f"{OWNER}/{NAME}@1")).bank_id == alice_bank
