"""Requests never exhaust the connection pool, slow sandbox work holds no database
session, one owner's slow template does not delay another owner's page, and a full queue is a 503
with Retry-After, never a 500.

The engine here has a pool of 2 connections and no overflow, and the app one session slot, so a
request that held its session during sandbox work would starve every other request. The slow
template is a stand-in run that blocks on an event (the scheduling is under test; the sandbox's
own tests run real templates)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Engine

from itemsmith.api.settings import ApiSettings
from itemsmith.items.schema import Provenance, RunStatus, Template
from itemsmith.sandbox import RunResult
from itemsmith.service.sampling import TemplateSampler
from itemsmith.templates_bank.storage import (
    BankCreate,
    add_template_version,
    create_bank,
    get_engine,
    open_session,
    upgrade,
)

from .conftest import OTHER_OWNER, TEMPLATE_SOURCE

SLOW_MARK = "# slow template\n"


@pytest.fixture
def engine(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    monkeypatch.setenv("ITEMSMITH_POOL_SIZE", "2")
    monkeypatch.setenv("ITEMSMITH_MAX_OVERFLOW", "0")
    monkeypatch.setenv("ITEMSMITH_POOL_TIMEOUT_S", "1")
    upgrade(database_url)
    engine = get_engine(database_url)
    assert engine.pool.size() == 2  # type: ignore[attr-defined]
    yield engine
    engine.dispose()


@pytest.fixture
def api_settings(api_settings: ApiSettings) -> ApiSettings:
    return api_settings.model_copy(update={"db_request_slots": 1, "db_wait_s": 20, "sample_workers": 2,
                                           "sample_runs_per_owner": 1, "sample_queue_per_owner": 3})


class _BlockingRuns:
    """Runs of the slow template block until `release` is set; the others answer at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.count = 0

    def __call__(self, source: str, handler: str, num_samples: int, seed: int) -> RunResult:
        self.count += 1
        if SLOW_MARK in source:
            self.started.set()
            assert self.release.wait(60)
        return RunResult(status=RunStatus.ok, items=[])


@pytest.fixture
def runs(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> _BlockingRuns:
    runs = _BlockingRuns()
    sampler: TemplateSampler = app.state.sampler
    monkeypatch.setattr(sampler, "_run", runs)
    return runs


def _client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test", timeout=60)


def test_200_concurrent_listings_on_a_two_connection_pool_get_no_server_error(app: FastAPI, api_key: str,
                                                                               seeded) -> None:
    async def burst() -> list[int]:
        async with _client(app) as client:
            responses = await asyncio.gather(*(client.get("/banks", headers={"X-API-Key": api_key})
                                               for _ in range(200)))
        return [r.status_code for r in responses]

    codes = asyncio.run(burst())
    assert codes == [200] * 200, {code: codes.count(code) for code in set(codes)}


def _slow_version(engine: Engine, bank_id: int) -> int:
    with open_session(engine) as session:
        return add_template_version(session, bank_id, Template(
            id="slow", source=TEMPLATE_SOURCE + SLOW_MARK, title="slow", category="math", handler="synthetic",
            provenance=Provenance(origin="generated", generator="scripted:test")), created_by="job").id


def _bob_version(engine: Engine) -> int:
    with open_session(engine) as session:
        bank = create_bank(session, BankCreate(name="bob-bank", handler="synthetic", owner=OTHER_OWNER))
        return add_template_version(session, bank.id, Template(
            id="fast", source=TEMPLATE_SOURCE, title="fast", category="math", handler="synthetic",
            provenance=Provenance(origin="generated", generator="scripted:test")), created_by="job").id


def test_slow_sandbox_work_of_one_owner_delays_no_other_owner_and_holds_no_session(
        app: FastAPI, engine: Engine, api_key: str, other_api_key: str, seeded, runs: _BlockingRuns) -> None:
    slow = _slow_version(engine, seeded.bank.id)
    fast = _bob_version(engine)

    async def scenario() -> None:
        async with _client(app) as client:
            alice = {"X-API-Key": api_key}
            # six of alice's pages of a slow template (six seeds: six runs): one runs, three wait, two
            # are refused at once
            pages = [asyncio.create_task(client.get(f"/templates/{slow}?seed={i}", headers=alice))
                     for i in range(6)]
            await asyncio.to_thread(runs.started.wait, 30)
            # meanwhile: bob's page, alice's listing and the health check all answer
            bob = await asyncio.wait_for(client.get(f"/templates/{fast}", headers={"X-API-Key": other_api_key}), 30)
            assert bob.status_code == 200, bob.text
            listing = await asyncio.wait_for(client.get("/banks", headers=alice), 30)
            assert listing.status_code == 200
            health = await asyncio.wait_for(client.get("/health"), 30)
            assert health.status_code == 200
            assert app.state.sampler.gate.in_flight() == {"alice": 1}  # bob's run came and went
            runs.release.set()
            finished = await asyncio.wait_for(asyncio.gather(*pages), 60)
            codes = sorted(r.status_code for r in finished)
            assert codes == [200, 200, 200, 200, 503, 503], codes
            assert all(int(r.headers["Retry-After"]) >= 1 for r in finished if r.status_code == 503)
            served = next(i for i, r in enumerate(finished) if r.status_code == 200)
            again = await client.get(f"/templates/{slow}?seed={served}", headers=alice)
            assert again.status_code == 200

    asyncio.run(scenario())
    assert runs.count == 5  # alice's four runs and bob's; the page asked again was cached
