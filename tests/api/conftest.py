"""Shared fixtures of the API tests: a migrated SQLite bank in tmp_path, the app on it, a test
client and API keys of two owners.

Route tests use `RecordingRunner`: submitted jobs stay queued (their rows are what the tests
check); the job tests run them for real.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from itemsmith.agents.authoring.taxonomy import coverage_plan
from itemsmith.api.app import create_app
from itemsmith.api.settings import ApiSettings
from itemsmith.items.schema import (
    Decision,
    IRTParameters,
    JudgeScore,
    Provenance,
    StudentResponse,
    Template,
)
from itemsmith.service.auth import create_key
from itemsmith.service.jobs import upgrade_database
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.storage import (
    BankCreate,
    ReviewCreate,
    add_template_version,
    create_bank,
    import_curated,
    open_session,
    record_review,
    record_student_response,
    record_verdict,
)

from ..support import serve_app

OWNER = "alice"
OTHER_OWNER = "bob"


class RecordingRunner:
    """A job runner that runs nothing: it records the job ids dispatched to it."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []

    def dispatch(self, job_id: str) -> None:
        self.dispatched.append(job_id)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


@pytest.fixture(autouse=True)
def scripted_provider_enabled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The API tests name recorded-reply (`scripted`) models, which a real server refuses; their
    scripts are written under tmp_path, the scripts folder."""
    monkeypatch.setenv("ITEMSMITH_API_MODEL_PROVIDERS", '["openai", "anthropic", "openai_compatible", "local", "scripted"]')
    monkeypatch.setenv("ITEMSMITH_SCRIPTED_DIR", str(tmp_path))


@pytest.fixture
def api_settings(tmp_path: Path, database_url: str) -> ApiSettings:
    return ApiSettings(database_url=database_url, uploads_dir=tmp_path / "uploads", job_runner="inprocess")


@pytest.fixture
def job_runner() -> RecordingRunner:
    return RecordingRunner()


@pytest.fixture
def app(engine: Engine, api_settings: ApiSettings, job_runner: RecordingRunner) -> FastAPI:
    app = create_app(api_settings)
    app.state.job_runner = job_runner
    return app


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


def _key(engine: Engine, owner: str) -> str:
    with open_session(engine) as session:
        key, _ = create_key(session, owner, name="test")
    return key


@pytest.fixture
def api_key(engine: Engine) -> str:
    """A key of OWNER."""
    return _key(engine, OWNER)


@pytest.fixture
def other_api_key(engine: Engine) -> str:
    """A key of OTHER_OWNER."""
    return _key(engine, OTHER_OWNER)


TEMPLATE_SOURCE = '''
def question(num_samples):
    items = []
    for i in range(num_samples):
        values = rng.normal(size=30).cumsum()
        top = int(np.argmax(values))
        wrong = [int(x) for x in rng.choice([j for j in range(30) if j != top], size=3, replace=False)]
        items.append(mc_item("At which index is the series highest?", top, wrong,
                             series=[series(values, name="x")], rationale=f"argmax is {top}"))
    return items
'''


class SeededBank:
    """A bank of OWNER on the built-in synthetic handler with one version in each state."""

    source = TEMPLATE_SOURCE

    def __init__(self, engine: Engine) -> None:
        def generated(key: str, source: str, category: str) -> Template:
            return Template(id=key, source=source, title=key.replace("_", " "), category=category, handler="synthetic",
                            provenance=Provenance(origin="generated", generator="scripted:test"))

        with open_session(engine) as session:
            self.bank = create_bank(session, BankCreate(name="alice-bank", handler="synthetic", task="trends",
                                                        owner=OWNER))
            self.approved = import_curated(session, self.bank.id, reviewer="curator",
                                           template_ids=["exam_trend_direction"])[0]
            self.accepted = add_template_version(session, self.bank.id, generated("argmax", TEMPLATE_SOURCE, "math"),
                                                 created_by="job")
            self.declined = add_template_version(
                session, self.bank.id, generated("argmax_copy", TEMPLATE_SOURCE + "\n# variant\n", "math"),
                created_by="job")
            self.pending = add_template_version(
                session, self.bank.id, generated("pending_one", TEMPLATE_SOURCE + "\n# pending\n", "other"),
                created_by="job")
            for judge, score in (("judge-a", 8.0), ("judge-b", 9.0)):
                record_verdict(session, self.accepted.id, JudgeScore(judge=judge, criterion="relevance", score=score))
            record_verdict(session, self.accepted.id, IRTParameters(discrimination=1.2, difficulty=-0.3,
                                                                    discrimination_se=0.4, difficulty_se=0.2))
            record_student_response(session, self.accepted.id, StudentResponse(
                student="student-a", rank=1, item_index=0, raw="Answer: B", choice=1, correct=True), item_hash="h0")
            record_verdict(session, self.accepted.id, Decision(accepted=True, stage="capability"))
            record_verdict(session, self.declined.id, JudgeScore(judge="judge-a", criterion="relevance", score=3.0))
            record_verdict(session, self.declined.id, JudgeScore(judge="judge-b", criterion="relevance", score=None,
                                                                 error="unparsed"))
            record_verdict(session, self.declined.id, Decision(accepted=False, stage="judges",
                                                               reasons=["relevance below 5"]))
            self.rejected = add_template_version(
                session, self.bank.id, generated("rejected_one", TEMPLATE_SOURCE + "\n# rejected\n", "math"),
                created_by="job")
            record_verdict(session, self.rejected.id, Decision(accepted=True, stage="capability"))
            record_review(session, self.rejected.id, ReviewCreate(decision="reject", reviewer="carol", note="dull"))


@pytest.fixture
def seeded(engine: Engine) -> SeededBank:
    return SeededBank(engine)


# --- jobs: scripted authoring runs, a PostgreSQL database of their own ---------------------------

# Each title's scripted generator reply is a curated template of the synthetic handler (distinct
# sources, so distinct versions); "Second" first sends code that fails the structure check.
# curated templates that pass the item audit (authoring runs it on every template)
AUTHOR_TEMPLATES = {"First": "feat_trend_classify", "Second": "feat_extreme_date", "Third": "exam_base_pattern"}
FAILING_SOURCE = "def question(num_samples):\n    index = rng.randint(3)\n    return []\n"


AUTHOR_TASK = "questions about synthetic series"


@dataclass(frozen=True)
class AuthorScripts:
    """Model specs of a scripted planner and generator (files, so a worker process can load them)."""

    planner: str
    generator: str
    titles: tuple[str, ...]

    def request(self, bank_id: int, **overrides: Any) -> dict[str, Any]:
        """An ``author`` job request for these scripts on the synthetic handler."""
        return {"bank_id": bank_id, "handler": "synthetic", "task": AUTHOR_TASK,
                "templates": len(self.titles), "generator": self.generator, "planner": self.planner, "slots": 1,
                "sandbox_workers": 1, "num_samples": 3, **overrides}


@pytest.fixture
def author_scripts(tmp_path: Path) -> Callable[..., AuthorScripts]:
    """Writes scripts for the given titles; `latency_s` slows every generator call."""

    def write(titles: Sequence[str] = ("First", "Second"), latency_s: float = 0.0) -> AuthorScripts:
        plan = [{"title": t, "category": category, "concept": "arithmetic", "kind": "mc",
                 "question": f"{t}: what is asked about <record>?", "answer_from": "the series", "columns": []}
                for t, category in zip(titles, coverage_plan(len(titles), task=AUTHOR_TASK), strict=True)]
        rules = []
        for title in titles:
            replies = [f"```python\n{get_curated(AUTHOR_TEMPLATES[title]).source}```\n"]
            if title == "Second":
                replies.insert(0, f"```python\n{FAILING_SOURCE}```\n")
            rules.append({"match": f"Title: {title}\\b", "replies": replies})
        folder = tmp_path / f"scripts-{uuid.uuid4().hex[:6]}"
        folder.mkdir()
        (folder / "planner.json").write_text(json.dumps({"replies": [json.dumps(plan)]}))
        (folder / "generator.json").write_text(json.dumps({"latency_s": latency_s, "rules": rules}))
        return AuthorScripts(planner=f"scripted:{folder / 'planner.json'}",
                             generator=f"scripted:{folder / 'generator.json'}", titles=tuple(titles))

    return write


@pytest.fixture
def migrated_postgres_url(postgres_database: str) -> str:
    """A PostgreSQL database of this test alone (tests/conftest.py), migrated as `itemsmith db
    upgrade` does it (bank tables and the jobs' checkpoint tables)."""
    upgrade_database(postgres_database)
    return postgres_database


@pytest.fixture
def seed_bank() -> type[SeededBank]:
    """`SeededBank` itself, for tests that seed a database of their own (e.g. PostgreSQL)."""
    return SeededBank


@pytest.fixture
def live_server(app: FastAPI) -> Iterator[str]:
    """The test's app on a real uvicorn server (a thread, a free loopback port): its base URL."""
    with serve_app(app) as url:
        yield url
