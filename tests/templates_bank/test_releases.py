"""Releases: frozen manifests (templates and versions, seeds, configs, IRT, counts, checksum),
numbering, items stored once with the release and read back (checked against the manifest),
and releases made before items were stored (regenerated exactly from sources and seeds)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa

from itemsmith.items.hashing import canonical_json, sha256_hex
from itemsmith.items.schema import Decision, IRTParameters, Item, JudgeScore, StudentResponse, Template
from itemsmith.sandbox import run_template
from itemsmith.templates_bank import releases as releases_module
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.regeneration import RegenerationError
from itemsmith.templates_bank.releases import (
    Release,
    ReleaseCreate,
    ReleaseError,
    ReleaseIntegrityError,
    create_release,
    get_release,
    list_releases,
    parse_release_ref,
)
from itemsmith.templates_bank.reproducibility import verify_release
from itemsmith.templates_bank.storage import (
    BankCreate,
    ItemRow,
    NotFoundError,
    ReleaseItemRow,
    ReviewCreate,
    add_template_version,
    create_bank,
    get_engine,
    import_curated,
    open_session,
    record_review,
    record_student_response,
    record_verdict,
    upgrade,
)

if TYPE_CHECKING:
    from conftest import CuratedRelease


def test_manifest_pins_templates_seeds_counts_and_checksum(curated_release: CuratedRelease) -> None:
    manifest = curated_release.release.manifest
    assert manifest.ref == "curated@1" and manifest.bank == "curated" and manifest.handler.name == "synthetic"
    assert [t.template_id for t in manifest.templates] == list(curated_release.templates)
    per_template = len(curated_release.seeds) * curated_release.samples
    for entry in manifest.templates:
        curated = get_curated(entry.template_id)
        assert entry.version == curated.content_hash and entry.category == curated.category
        assert entry.seeds == list(curated_release.seeds) and entry.num_samples == curated_release.samples
        assert entry.items == per_template
    assert manifest.counts.templates == 5 and manifest.counts.items == 5 * per_template
    assert sum(c.items for c in manifest.counts.by_category.values()) == manifest.counts.items
    assert list(manifest.counts.by_category) == sorted(manifest.counts.by_category)
    assert manifest.checksum == manifest.content_checksum()
    assert manifest.created_at.tzinfo is not None


def test_items_hash_is_what_the_sandbox_generates(curated_release: CuratedRelease) -> None:
    entry = curated_release.release.manifest.templates[0]
    digest = hashlib.sha256()
    for seed in entry.seeds:
        result = run_template(get_curated(entry.template_id).source, "synthetic", num_samples=entry.num_samples,
                              seed=seed)
        for raw in result.items:
            digest.update(canonical_json(Item.model_validate(raw).model_dump(mode="json")).encode() + b"\n")
    assert digest.hexdigest() == entry.items_sha256


def test_stored_release_reads_back_with_its_items(curated_release: CuratedRelease) -> None:
    with open_session(curated_release.url) as session:
        stored = get_release(session, "curated", 1)
        assert get_release(session, "curated").manifest == stored.manifest  # latest
        assert [m.ref for m in list_releases(session, "curated")] == ["curated@1"]
        with pytest.raises(NotFoundError, match="no release 9"):
            get_release(session, "curated", 9)
    assert stored == curated_release.release
    seen = [(entry.template_id, run.seed, len(run.items)) for entry, run in stored.items()]
    assert seen == [(t, s, curated_release.samples) for t in curated_release.templates for s in curated_release.seeds]


def test_tampered_manifest_fails_regeneration_of_a_release_without_stored_items(curated_release: CuratedRelease) -> None:
    release = curated_release.tiny
    entry = release.manifest.templates[0].model_copy(update={"items_sha256": "0" * 64})
    tampered = Release(manifest=release.manifest.model_copy(update={"templates": [entry]}), sources=release.sources)
    with pytest.raises(ReleaseIntegrityError, match="regenerated 2 items"):
        list(tampered.items())


def test_numbering_configs_irt_and_content_checksum(bank_url: str) -> None:
    with open_session(bank_url) as session:
        bank = create_bank(session, BankCreate(name="b", handler="synthetic", owner="alice"))
        (version,) = import_curated(session, bank.id, reviewer="alice", template_ids=["feat_trend_detect_tf"])
        irt = IRTParameters(discrimination=1.1, difficulty=0.25, discrimination_se=0.2, difficulty_se=0.1)
        record_verdict(session, version.id, irt)
        record_verdict(session, version.id, JudgeScore(judge="judge-b", criterion="relevance", score=8))
        record_verdict(session, version.id, JudgeScore(judge="judge-a", criterion="relevance", score=7))
        for student, rank in (("large", 2), ("small", 1), ("large", 2)):
            record_student_response(session, version.id, StudentResponse(student=student, rank=rank, item_index=0,
                                                                          raw="A"), item_hash="i" * 64)
        request = ReleaseCreate(bank="b", seeds=[3], num_samples=2, created_by="alice", note="first")
        first = create_release(session, request).manifest
        second = create_release(session, request.model_copy(update={"note": "again"})).manifest
        third = create_release(session, request.model_copy(update={"seeds": [4]})).manifest
        judges = [{"samples": 3, "name": "a-judge-with-a-long-name", "family": "openai"}]
        configured = create_release(session, request.model_copy(update={"judges": judges}))
    assert (first.release, second.release, third.release, configured.manifest.release) == (1, 2, 3, 4)
    assert first.templates[0].irt == irt
    assert first.judges == [{"name": "judge-a"}, {"name": "judge-b"}]
    assert first.students == [{"name": "small", "rank": 1}, {"name": "large", "rank": 2}]
    assert first.checksum == second.checksum  # same content, another number, note and time
    assert third.checksum != first.checksum and configured.manifest.checksum != first.checksum
    with open_session(bank_url) as session:  # JSON round trip on both backends, key order included
        assert get_release(session, "b", 1).manifest.model_dump_json() == first.model_dump_json()
        assert get_release(session, "b").manifest.model_dump_json() == configured.manifest.model_dump_json()
    assert list(configured.manifest.judges[0]) == ["family", "name", "samples"]


def test_release_errors(bank_url: str) -> None:
    with open_session(bank_url) as session:
        bank = create_bank(session, BankCreate(name="b", handler="synthetic", owner="alice"))
        with pytest.raises(ReleaseError, match="no approved or accepted"):
            create_release(session, ReleaseCreate(bank="b", created_by="alice"))
        import_curated(session, bank.id, reviewer="alice", template_ids=["feat_trend_detect_tf"])
        with pytest.raises(ReleaseError, match="not releasable.*nope"):
            create_release(session, ReleaseCreate(bank="b", created_by="alice", template_ids=["nope"]))
        broken = Template(id="broken", source="def question(num_samples):\n    return 1 / 0\n", title="broken",
                          category="arithmetic")
        version = add_template_version(session, bank.id, broken, created_by="alice")
        record_verdict(session, version.id, Decision(accepted=True, stage="capability"))
        with pytest.raises(RegenerationError, match="broken.*ZeroDivisionError"):
            create_release(session, ReleaseCreate(bank="b", created_by="alice"))
        assert session.scalar(sa.select(sa.func.count()).select_from(ItemRow)) == 0  # nothing stored
        record_review(session, version.id, ReviewCreate(decision="reject", reviewer="bob"))
        assert create_release(session, ReleaseCreate(bank="b", created_by="alice")).manifest.release == 1
    with pytest.raises(ValueError, match="distinct"):
        ReleaseCreate(bank="b", created_by="alice", seeds=[1, 1])


def test_parse_release_ref() -> None:
    assert parse_release_ref("curated@3") == ("curated", 3)
    assert parse_release_ref("my-bank.v2@latest") == ("my-bank.v2", None)
    assert parse_release_ref("curated") == ("curated", None)
    for bad in ("Curated@1", "curated@", "curated@x", "@1"):
        with pytest.raises(ValueError, match="BANK@NUMBER"):
            parse_release_ref(bad)


def test_built_in_handlers_of_one_module_each_regenerate_their_own_templates(bank_url: str) -> None:
    """ItalyPowerDemand and BasicMotions are defined in one module, so their content hashes are
    equal; a release keeps them apart by name and hash (keyed by hash alone, the ItalyPower
    template ran on BasicMotions and failed on its activity labels)."""
    templates = {"italy_power_season_tf": "italy_power", "basic_motions_find_activity": "basic_motions"}
    with open_session(bank_url) as session:
        bank = create_bank(session, BankCreate(name="ucr", handler="synthetic", owner="alice"))
        import_curated(session, bank.id, reviewer="alice", template_ids=list(templates))
        release = create_release(session, ReleaseCreate(bank="ucr", seeds=[0], num_samples=2, created_by="alice"))
    refs = {t.template_id: t.handler for t in release.manifest.templates}
    assert refs["italy_power_season_tf"].sha256 == refs["basic_motions_find_activity"].sha256
    assert {entry.template_id: release.local_handler(entry) for entry in release.manifest.templates} == templates
    with open_session(bank_url) as session:
        assert get_release(session, "ucr", 1).runs() == release.runs()


# --- items stored with the release -------------------------------------------------------------


def _runs(release: Release, how: str = "items") -> list[tuple[str, int, list[Item]]]:
    return [(entry.template_id, run.seed, run.items) for entry, run in getattr(release, how)()]


def test_items_are_stored_once_content_addressed_in_release_order(
        bank_url: str, add_argmax_bank: Callable[..., None]) -> None:
    add_argmax_bank(bank_url)
    with open_session(bank_url) as session:
        import_curated(session, session.scalar(sa.text("SELECT id FROM banks")), reviewer="tests",
                       template_ids=["feat_trend_detect_tf"])
        request = ReleaseCreate(bank="tiny", seeds=[5, 2], num_samples=3, created_by="tests")
        first = create_release(session, request)
        second = create_release(session, request.model_copy(update={"note": "the same content again"}))
    with open_session(bank_url) as session:
        bodies = {row.sha256: row.body for row in session.scalars(sa.select(ItemRow))}
        links = {n: session.scalars(sa.select(ReleaseItemRow).where(ReleaseItemRow.release_id == r.release_id)
                                    .order_by(ReleaseItemRow.ordinal)).all() for n, r in ((1, first), (2, second))}
    assert first.manifest.counts.items == len(links[1]) == len(links[2]) == 12
    assert [link.item_sha256 for link in links[1]] == [link.item_sha256 for link in links[2]]  # shared ...
    assert set(bodies) == {link.item_sha256 for link in links[1]}  # ... and stored once
    assert all(sha256_hex(body) == key for key, body in bodies.items())
    assert [(link.ordinal, link.template_position, link.seed, link.sample_index) for link in links[1]] == [
        (6 * t + 3 * s + i, t, seed, i) for t in range(2) for s, seed in enumerate([5, 2]) for i in range(3)]
    regenerated = _runs(first, "regenerated")
    assert _runs(first) == regenerated  # the returned release reads its stored items once committed
    with open_session(bank_url) as session:
        stored = get_release(session, "tiny", 1)
    assert stored.stored is not None and _runs(stored) == regenerated
    # stored as the template gave it: metadata keys in the template's order, not sorted
    argmax = next(body for body in bodies.values() if "spike_index" in body)
    assert list(json.loads(argmax)["metadata"]) == ["spike_index", "answer_kind"]


def test_stored_items_are_read_without_running_a_template(curated_release: CuratedRelease,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _runs(curated_release.release, "regenerated")

    def no_sandbox(*args: object, **kwargs: object) -> None:
        raise AssertionError("a template ran")

    monkeypatch.setattr(releases_module, "regenerate", no_sandbox)
    with open_session(curated_release.url) as session:
        release = get_release(session, "curated", 1)
    assert _runs(release) == expected


def test_stored_items_are_checked_against_the_manifest_and_their_hashes(tmp_path: Path,
                                                                         add_argmax_bank: Callable[..., None]) -> None:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    add_argmax_bank(url)
    with open_session(url) as session:
        release = create_release(session, ReleaseCreate(bank="tiny", seeds=[0], num_samples=2, created_by="tests"))
    entry = release.manifest.templates[0].model_copy(update={"items_sha256": "0" * 64})
    tampered = dataclasses.replace(release, manifest=release.manifest.model_copy(update={"templates": [entry]}))
    with pytest.raises(ReleaseIntegrityError, match="stored 2 items.*the database was changed"):
        list(tampered.items())
    # someone who drops the append-only trigger and edits an item's JSON in place
    with get_engine(url).begin() as connection:
        connection.execute(sa.text("DROP TRIGGER items_no_update"))
        connection.execute(sa.text("UPDATE items SET body = replace(body, 'highest', 'lowest')"))
    with pytest.raises(ReleaseIntegrityError, match="no longer matches its hash"):
        list(release.items())


def _legacy_release(url: str, monkeypatch: pytest.MonkeyPatch, add_argmax_bank: Callable[..., None]) -> None:
    """Bank "tiny" with release 1 as itemsmith made it before items were stored (at revision 0005,
    no items), then migrated to this itemsmith's schema."""
    upgrade(url, "0005")
    add_argmax_bank(url)
    with monkeypatch.context() as patched, open_session(url) as session:
        patched.setattr(releases_module, "store_items", lambda *args: None)
        patched.setattr(releases_module, "_recorded_runs", lambda *args: {})  # no item runs then either
        patched.setattr(releases_module, "store_item_runs", lambda *args: None)
        create_release(session, ReleaseCreate(bank="tiny", seeds=[0, 1], num_samples=3, created_by="tests"))
    upgrade(url)


def test_a_release_made_before_items_were_stored_is_regenerated_until_verify_stores_it(
        backend_url: str, monkeypatch: pytest.MonkeyPatch, add_argmax_bank: Callable[..., None]) -> None:
    _legacy_release(backend_url, monkeypatch, add_argmax_bank)
    with open_session(backend_url) as session:
        legacy = get_release(session, "tiny", 1)
    assert legacy.stored is None
    regenerated = _runs(legacy)  # read as before: regenerated, checked against the manifest
    assert [(t, s, len(items)) for t, s, items in regenerated] == [("argmax", 0, 3), ("argmax", 1, 3)]
    with open_session(backend_url) as session:
        report = verify_release(session, legacy)
    assert report.reproduced and report.compared_with == "manifest hashes" and report.stored_now == 6
    with open_session(backend_url) as session:
        stored = get_release(session, "tiny", 1)
    assert stored.stored is not None and _runs(stored) == regenerated
    with open_session(backend_url) as session:
        again = verify_release(session, stored)
    assert again.reproduced and again.compared_with == "stored items" and again.stored_now == 0


def test_a_release_made_before_items_were_stored_that_no_longer_reproduces_stores_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, add_argmax_bank: Callable[..., None]) -> None:
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    _legacy_release(url, monkeypatch, add_argmax_bank)
    with open_session(url) as session:
        legacy = get_release(session, "tiny", 1)
    (version,) = legacy.sources
    changed = dataclasses.replace(legacy, sources={version: legacy.sources[version].replace("highest", "largest")})
    with open_session(url) as session:
        report = verify_release(session, changed)
    assert not report.reproduced and report.stored_now == 0
    (difference,) = report.templates[0].differences
    assert difference.startswith("6 items with sha256 ")
    assert difference.endswith(f"the manifest recorded 6 with {legacy.manifest.templates[0].items_sha256[:12]}")
    with open_session(url) as session:
        assert get_release(session, "tiny", 1).stored is None
