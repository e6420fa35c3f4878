"""Fixtures of the storage, release and export tests: bank databases on SQLite and on the
local PostgreSQL (`postgres_url`, tests/conftest.py), and a release of curated templates as a
realistic export fixture; `add_argmax_bank` makes a bank of one small template."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from itemsmith.items.schema import Decision, Template
from itemsmith.templates_bank.releases import Release, ReleaseCreate, create_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    add_template_version,
    create_bank,
    downgrade,
    import_curated,
    open_session,
    record_verdict,
    upgrade,
)

from ..template_sources import ARGMAX

# Five curated templates on the synthetic handler: one handler, one sandbox pool.
RELEASE_TEMPLATES = ["exam_trend_direction", "exam_granger_direction", "feat_seasonality_classify",
                     "tsaqa_puzzle_trend_season", "exam_pure_noise_tf"]
RELEASE_SEEDS = [0, 1, 2]
RELEASE_SAMPLES = 4


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database on each backend (not migrated); the PostgreSQL one is migrated down
    to nothing after the test."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bank.sqlite'}"
    url = request.getfixturevalue("postgres_url")
    request.addfinalizer(lambda: downgrade(url, "base"))
    return url


@pytest.fixture
def bank_url(backend_url: str) -> str:
    """A migrated, empty bank database on each backend."""
    upgrade(backend_url)
    return backend_url


@dataclass(frozen=True)
class CuratedRelease:
    url: str
    release: Release  # bank "curated": 5 templates x 3 seeds x 4 items
    tiny: Release  # bank "tiny": 1 template x 1 seed x 2 items (for slow paths: plots)
    templates: tuple[str, ...] = tuple(RELEASE_TEMPLATES)
    seeds: tuple[int, ...] = tuple(RELEASE_SEEDS)
    samples: int = RELEASE_SAMPLES


@pytest.fixture(scope="session")
def curated_release(tmp_path_factory: pytest.TempPathFactory) -> CuratedRelease:
    url = f"sqlite:///{tmp_path_factory.mktemp('curated') / 'bank.sqlite'}"
    upgrade(url)
    with open_session(url) as session:
        for name in ("curated", "tiny"):
            bank = create_bank(session, BankCreate(name=name, handler="synthetic", owner="tests",
                                                   task="time-series reasoning"))
            import_curated(session, bank.id, reviewer="tests", template_ids=RELEASE_TEMPLATES)
        release = create_release(session, ReleaseCreate(bank="curated", seeds=RELEASE_SEEDS,
                                                        num_samples=RELEASE_SAMPLES, created_by="tests"))
        tiny = create_release(session, ReleaseCreate(bank="tiny", seeds=[7], num_samples=2, created_by="tests",
                                                     template_ids=["exam_trend_direction"]))
    return CuratedRelease(url=url, release=release, tiny=tiny)


def _add_argmax_bank(url: str, name: str = "tiny") -> None:
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name=name, handler="synthetic", owner="tests"))
        version = add_template_version(session, bank.id, Template(id="argmax", source=ARGMAX, title="argmax",
                                                                 category="retrieval"), created_by="tests")
        record_verdict(session, version.id, Decision(accepted=True, stage="capability"))


@pytest.fixture
def add_argmax_bank() -> Callable[..., None]:
    """``add_argmax_bank(url, name="tiny")``: a bank on the synthetic handler with `ARGMAX` accepted,
    ready to release."""
    return _add_argmax_bank
