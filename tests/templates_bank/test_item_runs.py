"""Item runs: `release create` reuses each (template, seed) run an earlier release generated under
the same key (template source, handler code and data, seed, sample count, generator), starts no
sandbox for them, and gives the same manifest and exported bytes as generating them; a change to
any part of the key generates the run again; `release verify` never reuses."""

from __future__ import annotations

import filecmp
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from itemsmith.items.schema import Decision, Template
from itemsmith.templates_bank import item_runs
from itemsmith.templates_bank import releases as releases_module
from itemsmith.templates_bank import reproducibility as reproducibility_module
from itemsmith.templates_bank.exporters import export_release
from itemsmith.templates_bank.handler_identity import HandlerRef
from itemsmith.templates_bank.releases import Release, ReleaseCreate, ReleaseIntegrityError, create_release, get_release
from itemsmith.templates_bank.reproducibility import verify_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    add_template_version,
    create_bank,
    get_engine,
    import_curated,
    open_session,
    record_verdict,
    upgrade,
)

from ..template_sources import ARGMAX

FORMATS = ("jsonl", "hf", "lm-eval", "inspect")
CURATED = "feat_trend_detect_tf"


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    return url


def _regenerated_runs(monkeypatch: pytest.MonkeyPatch, module: object) -> list[tuple[str, int]]:
    """The (template, seed) runs `module` sends to the sandbox from now on, as they are asked for."""
    runs: list[tuple[str, int]] = []
    real = module.regenerate  # type: ignore[attr-defined]

    def counting(asked, **kwargs):
        runs.extend((run.template_id, seed) for run in asked for seed in run.seeds)
        return real(asked, **kwargs)

    monkeypatch.setattr(module, "regenerate", counting)
    return runs


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The (template, seed) runs `create_release` sends to the sandbox."""
    return _regenerated_runs(monkeypatch, releases_module)


def _bank(url: str, name: str, argmax: str = ARGMAX, handler: str = "synthetic", curated: bool = True) -> None:
    with open_session(url) as session:
        bank = create_bank(session, BankCreate(name=name, handler=handler, owner="tests"))
        version = add_template_version(session, bank.id, Template(id="argmax", source=argmax, title="argmax",
                                                                 category="retrieval"), created_by="tests")
        record_verdict(session, version.id, Decision(accepted=True, stage="capability"))
        if curated:
            import_curated(session, bank.id, reviewer="tests", template_ids=[CURATED])


def _release(url: str, bank: str, seeds: tuple[int, ...] = (0, 1), samples: int = 3, reuse: bool = True) -> Release:
    with open_session(url) as session:
        created = create_release(session, ReleaseCreate(bank=bank, seeds=list(seeds), num_samples=samples,
                                                        created_by="tests"), reuse=reuse)
    with open_session(url) as session:
        return get_release(session, bank, created.manifest.release)


def _runs(release: Release) -> list[tuple[str, int, list[str]]]:
    return [(entry.template_id, run.seed, [releases_module.item_body(item) for item in run.items])
            for entry, run in release.items()]


def test_a_second_release_reuses_every_run_in_any_bank_without_a_sandbox(
        url: str, generated: list[tuple[str, int]]) -> None:
    _bank(url, "one")
    _bank(url, "two")  # another bank of the same templates: the same runs
    first = _release(url, "one")
    assert generated == [("argmax", 0), ("argmax", 1), (CURATED, 0), (CURATED, 1)]
    generated.clear()
    again, other = _release(url, "one"), _release(url, "two")
    assert generated == []
    assert again.manifest.checksum == first.manifest.checksum  # the bank's name is content: not `other`'s
    assert again.manifest.templates == other.manifest.templates == first.manifest.templates
    assert _runs(again) == _runs(other) == _runs(first)
    with open_session(url) as session:
        assert session.scalar(sa.text("SELECT count(*) FROM item_runs")) == 4


def test_a_new_seed_size_source_or_generator_is_generated_again(
        url: str, generated: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    _bank(url, "b")
    first = _release(url, "b")
    generated.clear()
    _release(url, "b", seeds=(1, 2))  # seed 1 is reused, seed 2 is new
    assert generated == [("argmax", 2), (CURATED, 2)]
    generated.clear()
    sized = _release(url, "b", samples=4)
    assert generated == [("argmax", 0), ("argmax", 1), (CURATED, 0), (CURATED, 1)]
    assert sized.manifest.counts.items == 16
    generated.clear()
    _bank(url, "edited", argmax=ARGMAX.replace("highest", "largest"))
    edited = _release(url, "edited")
    assert generated == [("argmax", 0), ("argmax", 1)]  # the curated template's runs are reused
    assert edited.manifest.templates[0].items_sha256 != first.manifest.templates[0].items_sha256
    assert "largest" in _runs(edited)[0][2][0]
    generated.clear()
    monkeypatch.setattr(item_runs, "generator_fingerprint", lambda: "another numpy")
    _release(url, "b")
    assert len(generated) == 4


CSV_HANDLER = '''
from pathlib import Path
import pandas as pd
class CsvHandler:
    name = "csv"
    description = "one record from sub/data.csv"
    def __init__(self, data_dir=None):
        self.frame = pd.read_csv(Path(data_dir) / "sub" / "data.csv")
    def records(self):
        return pd.DataFrame({"record_id": [1], "label": ["rising"]})
    def series(self, record_id):
        return self.frame.set_index("t")
'''
LAST_VALUE = ("def question(n):\n    rid = handler.records()['record_id'].iloc[0]\n"
              "    v = handler.series(rid)['value']\n"
              "    return [mc_item('Last value?', f'{v.iloc[-1]:.1f}', ['0.0']) for _ in range(n)]\n")


def test_changed_handler_data_in_a_subfolder_is_generated_again(
        url: str, tmp_path: Path, generated: list[tuple[str, int]]) -> None:
    """The handler's identity hashes its folder's top-level files only; the key hashes the whole tree."""
    folder = tmp_path / "handler"
    (folder / "sub").mkdir(parents=True)
    (folder / "handler.py").write_text(CSV_HANDLER)
    (folder / "sub" / "data.csv").write_text("t,value\n0,1.5\n1,4.0\n")
    _bank(url, "csv", argmax=LAST_VALUE, handler=str(folder / "handler.py"), curated=False)
    first = _release(url, "csv", seeds=(0,), samples=1)
    assert generated == [("argmax", 0)] and "4.0" in _runs(first)[0][2][0]
    (folder / "sub" / "data.csv").write_text("t,value\n0,1.5\n1,7.0\n")
    changed = _release(url, "csv", seeds=(0,), samples=1)
    assert generated == [("argmax", 0), ("argmax", 0)] and "7.0" in _runs(changed)[0][2][0]
    assert changed.manifest.templates[0].handler == first.manifest.templates[0].handler  # identity unchanged


def test_handler_files_hash_covers_subfolders_and_links(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "handler.py").write_text(CSV_HANDLER)
    (tmp_path / "sub" / "data.csv").write_text("t,value\n0,1\n")
    spec = str(tmp_path / "handler.py")
    seen = [item_runs.handler_files_sha256(spec)]
    (tmp_path / "sub" / "data.csv").write_text("t,value\n0,2\n")
    seen.append(item_runs.handler_files_sha256(spec))
    os.symlink("sub/data.csv", tmp_path / "alias.csv")
    seen.append(item_runs.handler_files_sha256(spec))
    (tmp_path / "sub" / "data.csv").rename(tmp_path / "sub" / "renamed.csv")
    seen.append(item_runs.handler_files_sha256(spec))
    assert len(set(seen)) == len(seen)
    assert item_runs.handler_files_sha256(spec) == seen[-1]  # the same tree, the same hash
    assert item_runs.handler_files_sha256("synthetic") is None


@pytest.mark.parametrize("change", ["source", "kind", "handler name", "handler hash", "handler files", "seed",
                                    "num_samples", "generator"])
def test_every_part_of_the_key_changes_it(change: str) -> None:
    parts = {"source": ARGMAX, "kind": "code", "handler": HandlerRef(name="h", sha256="a" * 64),
             "handler_files": None, "seed": 0, "num_samples": 3, "generator": "g"}
    changed = {**parts, **{
        "source": {"source": ARGMAX + " "}, "kind": {"kind": "static"},
        "handler name": {"handler": HandlerRef(name="h2", sha256="a" * 64)},
        "handler hash": {"handler": HandlerRef(name="h", sha256="b" * 64)}, "handler files": {"handler_files": "f"},
        "seed": {"seed": 1}, "num_samples": {"num_samples": 4}, "generator": {"generator": "g2"}}[change]}
    assert item_runs.run_key(**parts) == item_runs.run_key(**parts)
    assert item_runs.run_key(**changed) != item_runs.run_key(**parts)


def test_exports_are_byte_identical_whether_items_were_reused_or_generated(
        tmp_path: Path, generated: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases_module, "utcnow", lambda: datetime(2026, 12, 7, 12, 0, tzinfo=UTC))
    made: dict[bool, Release] = {}
    for reuse in (True, False):
        url = f"sqlite:///{tmp_path / f'reuse-{reuse}.sqlite'}"
        upgrade(url)
        _bank(url, "b")
        _release(url, "b")
        generated.clear()
        made[reuse] = _release(url, "b", reuse=reuse)
        assert len(generated) == (0 if reuse else 4)
    assert made[True].manifest == made[False].manifest
    for fmt in FORMATS:
        reused = export_release(made[True], fmt, tmp_path / "reused" / fmt).out
        fresh = export_release(made[False], fmt, tmp_path / "generated" / fmt).out
        names = sorted(str(p.relative_to(reused)) for p in reused.rglob("*") if p.is_file())
        assert names and names == sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
        _, mismatch, errors = filecmp.cmpfiles(reused, fresh, names, shallow=False)
        assert (mismatch, errors) == ([], []), fmt


def test_verify_regenerates_every_run_even_when_recorded(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _bank(url, "b")
    release = _release(url, "b")
    _release(url, "b")  # recorded and reused
    asked = _regenerated_runs(monkeypatch, reproducibility_module)
    with open_session(url) as session:
        report = verify_release(session, release)
    assert report.reproduced and asked == [("argmax", 0), ("argmax", 1), (CURATED, 0), (CURATED, 1)]


def test_a_tampered_recorded_run_fails_create_and_item_runs_are_append_only(url: str) -> None:
    _bank(url, "b")
    _release(url, "b")
    engine = get_engine(url)
    for statement in ("UPDATE item_runs SET items = '[]'", "DELETE FROM item_runs"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), engine.begin() as connection:
            connection.execute(sa.text(statement))
    with engine.begin() as connection:  # someone who drops the items' trigger and edits one in place
        connection.execute(sa.text("DROP TRIGGER items_no_update"))
        connection.execute(sa.text("UPDATE items SET body = replace(body, 'highest', 'lowest')"))
    with open_session(url) as session, pytest.raises(ReleaseIntegrityError, match="no longer matches its hash"):
        create_release(session, ReleaseCreate(bank="b", seeds=[0, 1], num_samples=3, created_by="tests"))
