"""Storage on SQLite and on the local PostgreSQL: migrations up and down, the ORM matching the
migrated schema, immutable versions keyed by content hash, append-only records (in the session
and in the database), verdicts and student responses with their cache keys, review status, a
release's stored items (content-addressed, read in batches) and the plot cache."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from itemsmith.items.hashing import item_hash, prompt_hash
from itemsmith.items.schema import (
    CapabilityVerdict,
    Decision,
    IRTParameters,
    Item,
    JudgeScore,
    Provenance,
    RunStatus,
    StructureReport,
    StudentResponse,
    Template,
)
from itemsmith.templates_bank import migrations
from itemsmith.templates_bank.curated import get_curated
from itemsmith.templates_bank.settings import BankSettings
from itemsmith.templates_bank.storage import (
    APPEND_ONLY_TABLES,
    VERSION_TABLE,
    BankCreate,
    BankExistsError,
    Base,
    ImmutableRecordError,
    ItemRow,
    NotFoundError,
    ReleaseItemRow,
    ReleaseRow,
    ReleaseTemplateRow,
    ReviewCreate,
    TemplateVersionRow,
    VersionConflictError,
    add_template_version,
    cached_plot,
    cached_student_response,
    cached_verdict,
    create_bank,
    current_revision,
    downgrade,
    get_bank,
    get_engine,
    get_version,
    head_revision,
    is_known_revision,
    list_banks,
    list_reviews,
    list_student_responses,
    list_verdicts,
    list_versions,
    normalize_url,
    open_session,
    read_release_items,
    record_review,
    record_student_response,
    record_verdict,
    releasable_versions,
    require_current_schema,
    store_plot,
    store_release_items,
    upgrade,
    version_statuses,
)

TABLES = {"banks", "template_versions", "verdicts", "student_responses", "review_decisions", "releases",
          "release_templates", "evaluation_responses", "items", "release_items", "item_plots"}
SOURCE = "def question(num_samples):\n    return []\n"
ITEM = Item(question="Which way does it trend?", options=["up", "down"], answer_index=0,
            series=[{"name": "x", "values": [1.0, 2.0, 3.0]}])


def _template(key: str = "t", source: str = SOURCE, **provenance: object) -> Template:
    return Template(id=key, source=source, title=f"title {key}", category="pattern_recognition",
                    concepts=["trend"], handler="synthetic", difficulty="easy",
                    provenance=Provenance(origin="generated", generator="scripted:test", **provenance))


def _bank(session, name: str = "bank") -> int:
    return create_bank(session, BankCreate(name=name, handler="synthetic", owner="alice", task="trends")).id


def _tables(url: str) -> set[str]:
    return set(sa.inspect(get_engine(url)).get_table_names())


# --- migrations ---------------------------------------------------------------------------------


def test_migrations_up_down_up(backend_url: str) -> None:
    assert current_revision(backend_url) is None
    upgrade(backend_url)
    assert current_revision(backend_url) == head_revision() == "0007"
    assert TABLES <= _tables(backend_url)
    downgrade(backend_url, "base")
    assert current_revision(backend_url) is None
    assert not TABLES & _tables(backend_url)
    upgrade(backend_url)
    assert TABLES <= _tables(backend_url)
    with open_session(backend_url) as session:  # usable after a full round trip
        assert list_banks(session) == []


def test_the_shipped_revisions_are_alembics(bank_url: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    scripts = ScriptDirectory.from_config(config)
    assert head_revision() == scripts.get_current_head()
    assert all(is_known_revision(script.revision) for script in scripts.walk_revisions())
    assert not is_known_revision("0000") and not is_known_revision("ffff")
    with get_engine(bank_url).connect() as connection:  # the version table read without Alembic
        assert current_revision(bank_url) == MigrationContext.configure(
            connection, opts={"version_table": VERSION_TABLE}).get_current_revision() == head_revision()


def test_orm_models_match_the_migrated_schema(bank_url: str) -> None:
    import itemsmith.service.tables  # noqa: F401 - the service's tables share Base and the migration chain

    with get_engine(bank_url).connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_require_current_schema(backend_url: str) -> None:
    with pytest.raises(Exception, match="itemsmith db upgrade"):
        require_current_schema(backend_url)
    upgrade(backend_url)
    require_current_schema(backend_url)


# --- banks and versions -------------------------------------------------------------------------


def test_banks(bank_url: str) -> None:
    with open_session(bank_url) as session:
        bank_id = _bank(session, "trends")
        with pytest.raises(BankExistsError, match="exists already"):
            _bank(session, "trends")
        bank = get_bank(session, "trends")
        assert bank.id == bank_id and bank.owner == "alice" and bank.task == "trends"
        assert bank.created_at.tzinfo is not None
        with pytest.raises(NotFoundError, match="banks: trends"):
            get_bank(session, "nope")
    with pytest.raises(ValueError, match="pattern"):
        BankCreate(name="Has Spaces", handler="synthetic", owner="alice")


def test_template_versions_are_keyed_by_content_hash(bank_url: str) -> None:
    with open_session(bank_url) as session:
        bank_id = _bank(session)
        first = add_template_version(session, bank_id, _template(), created_by="alice")
        assert first.content_hash == _template().content_hash and first.parent_version_id is None
        assert add_template_version(session, bank_id, _template(), created_by="bob") == first  # idempotent
        with pytest.raises(VersionConflictError, match="stored already as template 't'"):
            add_template_version(session, bank_id, _template(key="other"), created_by="alice")
        second = add_template_version(session, bank_id, _template(source=SOURCE + "# v2\n"), created_by="alice")
        assert second.parent_version_id == first.id  # a new version of a key revises its latest
        third = add_template_version(session, bank_id, _template(source=SOURCE + "# v3\n",
                                                                 parent_hash=first.content_hash), created_by="alice")
        assert third.parent_version_id == first.id  # an explicit parent wins
        with pytest.raises(VersionConflictError, match="not in the bank"):
            add_template_version(session, bank_id, _template(source="x = 1\n", parent_hash="0" * 64),
                                 created_by="alice")
        assert [v.id for v in list_versions(session, bank_id, "t")] == [first.id, second.id, third.id]
        template = get_version(session, first.id).to_template()
        assert template.model_dump(exclude={"provenance"}) == _template().model_dump(exclude={"provenance"})
        assert template.provenance.generator == "scripted:test"
        other_bank = _bank(session, "other")  # the same source may live in another bank
        assert add_template_version(session, other_bank, _template(), created_by="alice").id != first.id


def test_append_only_in_the_session(bank_url: str) -> None:
    with open_session(bank_url) as session:
        version = add_template_version(session, _bank(session), _template(), created_by="alice")
    with pytest.raises(ImmutableRecordError, match="append-only"), open_session(bank_url) as session:
        session.get(TemplateVersionRow, version.id).title = "changed"
    with pytest.raises(ImmutableRecordError), open_session(bank_url) as session:
        session.delete(session.get(TemplateVersionRow, version.id))
    with open_session(bank_url) as session:
        assert get_version(session, version.id).title == "title t"


def test_append_only_in_the_database(bank_url: str) -> None:
    """Triggers refuse UPDATE and DELETE of every append-only table, whoever bypasses the ORM."""
    with open_session(bank_url) as session:
        bank_id = _bank(session)
        version = add_template_version(session, bank_id, _template(), created_by="alice")
        record_verdict(session, version.id, Decision(accepted=True, stage="judges"))
        record_student_response(session, version.id, StudentResponse(student="s", rank=1, item_index=0, raw="A"),
                                item_hash="i" * 64)
        record_review(session, version.id, ReviewCreate(decision="approve", reviewer="alice"))
        release = ReleaseRow(bank_id=bank_id, number=1, manifest={}, checksum="c" * 64, created_by="alice")
        session.add(release)
        session.flush()
        session.add(ReleaseTemplateRow(release_id=release.id, position=0, template_version_id=version.id, seeds=[0],
                                       num_samples=1, item_count=1, items_sha256="s" * 64))
    engine = get_engine(bank_url)
    for table in APPEND_ONLY_TABLES:
        column = "num_samples" if table == "release_templates" else "id"
        for statement in (f"UPDATE {table} SET {column} = {column}", f"DELETE FROM {table}"):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"), engine.begin() as connection:
                connection.execute(sa.text(statement))
    with open_session(bank_url) as session:
        assert get_version(session, version.id).title == "title t"


# --- verdicts, responses, reviews ---------------------------------------------------------------


def test_every_verdict_round_trips_typed(bank_url: str) -> None:
    records = [
        StructureReport(status=RunStatus.ok, items=[ITEM], elapsed_ms=12.5, deterministic=True, varied=True),
        JudgeScore(judge="openai:gpt-4o", criterion="solvability", score=7.5, rationale="fine", samples=[7, 8],
                   method="samples", attempts=2),
        CapabilityVerdict(accuracies={"small": 0.3, "large": 0.8}, statistic=0.9, interval=(0.5, 1.0), reason="ok"),
        IRTParameters(discrimination=1.2, difficulty=-0.4, discrimination_se=0.3, difficulty_se=0.2, flags=["wide"]),
        Decision(accepted=True, stage="capability", reasons=["passed"]),
    ]
    with open_session(bank_url) as session:
        version = add_template_version(session, _bank(session), _template(), created_by="alice")
        for record in records:
            record_verdict(session, version.id, record, prompt_hash="p" * 64, item_hash="i" * 64, run_id="run-1")
        with pytest.raises(NotFoundError):
            record_verdict(session, 999, records[0])
    with open_session(bank_url) as session:
        stored = list_verdicts(session, version.id)
        assert [v.stage for v in stored] == ["structure", "judge", "capability", "irt", "decision"]
        assert [v.record for v in stored] == records
        assert stored[1].model == "openai:gpt-4o"  # a judge score's model is its judge
        assert [v.record for v in list_verdicts(session, version.id, "irt")] == [records[3]]


def test_judge_cache_by_model_prompt_and_item(bank_url: str) -> None:
    key = {"model": "judge-a", "prompt_hash": prompt_hash("score this"), "item_hash": item_hash(ITEM)}
    with open_session(bank_url) as session:
        version = add_template_version(session, _bank(session), _template(), created_by="alice")
        assert cached_verdict(session, "judge", **key) is None
        for score in (5.0, 6.0):
            record_verdict(session, version.id, JudgeScore(judge="judge-a", criterion="relevance", score=score),
                           prompt_hash=key["prompt_hash"], item_hash=key["item_hash"])
        hit = cached_verdict(session, "judge", **key)
        assert hit is not None and hit.record.score == 6.0  # the newest answer
        assert cached_verdict(session, "judge", **{**key, "model": "judge-b"}) is None
        assert cached_verdict(session, "judge", **{**key, "prompt_hash": prompt_hash("other")}) is None


def test_student_responses_queryable_and_cached(bank_url: str) -> None:
    other = ITEM.model_copy(update={"answer_index": 1})
    with open_session(bank_url) as session:
        version = add_template_version(session, _bank(session), _template(), created_by="alice")
        for student, rank in (("small", 1), ("large", 2)):
            for index, item in enumerate((ITEM, other)):
                response = StudentResponse(student=student, rank=rank, item_index=index, raw="Answer: A",
                                           choice=0, correct=item.answer_index == 0)
                record_student_response(session, version.id, response, item_hash=item_hash(item),
                                        prompt_hash=prompt_hash(f"prompt {index}"), run_id="run-1")
    with open_session(bank_url) as session:
        assert len(list_student_responses(session, version.id)) == 4
        small = list_student_responses(session, model="small")
        assert [r.record.correct for r in small] == [True, False]
        assert small[0].record == StudentResponse(student="small", rank=1, item_index=0, raw="Answer: A", choice=0,
                                                  correct=True)
        assert {r.model for r in list_student_responses(session, item_hash=item_hash(other))} == {"small", "large"}
        hit = cached_student_response(session, model="large", prompt_hash=prompt_hash("prompt 1"),
                                      item_hash=item_hash(other))
        assert hit is not None and hit.rank == 2 and not hit.correct
        assert cached_student_response(session, model="large", prompt_hash=prompt_hash("prompt 0"),
                                       item_hash=item_hash(other)) is None


def test_review_decisions_and_release_status(bank_url: str) -> None:
    with open_session(bank_url) as session:
        bank_id = _bank(session)
        a1 = add_template_version(session, bank_id, _template("a"), created_by="alice")
        b1 = add_template_version(session, bank_id, _template("b", source="b = 1\n"), created_by="alice")
        c1 = add_template_version(session, bank_id, _template("c", source="c = 1\n"), created_by="alice")
        assert version_statuses(session, bank_id) == {a1.id: "pending", b1.id: "pending", c1.id: "pending"}
        record_verdict(session, a1.id, Decision(accepted=True, stage="capability"))
        record_verdict(session, b1.id, Decision(accepted=False, stage="judges", reasons=["ambiguous"]))
        record_verdict(session, c1.id, Decision(accepted=True, stage="capability"))
        review = record_review(session, c1.id, ReviewCreate(decision="reject", reviewer="bob", note="leaks answer"))
        a2 = add_template_version(session, bank_id, _template("a", source=SOURCE + "# v2\n"), created_by="alice")
        record_review(session, a2.id, ReviewCreate(decision="approve", reviewer="bob"))
        b2 = add_template_version(session, bank_id, _template("b", source="b = 2\n"), created_by="alice")
    with open_session(bank_url) as session:
        assert version_statuses(session, bank_id) == {a1.id: "accepted", b1.id: "declined", c1.id: "rejected",
                                                      a2.id: "approved", b2.id: "pending"}
        assert [v.id for v in releasable_versions(session, bank_id)] == [a2.id]
        stored = list_reviews(session, c1.id)
        assert stored == [review] and stored[0].reviewer == "bob" and stored[0].note == "leaks answer"
        assert stored[0].created_at.tzinfo == UTC
        assert (datetime.now(UTC) - stored[0].created_at).total_seconds() < 60
    with pytest.raises(ValueError):
        ReviewCreate(decision="maybe", reviewer="bob")


def test_curated_templates_round_trip(bank_url: str) -> None:
    curated = get_curated("exam_trend_direction")
    with open_session(bank_url) as session:
        version = add_template_version(session, _bank(session), curated, created_by="alice")
    with open_session(bank_url) as session:
        assert get_version(session, version.id).to_template() == curated


# --- stored release items -----------------------------------------------------------------------


def _release_with_items(url: str, items: list[tuple[int, int, int, str]]) -> int:
    with open_session(url) as session:
        release = ReleaseRow(bank_id=_bank(session), number=1, manifest={}, checksum="c" * 64, created_by="alice")
        session.add(release)
        session.flush()
        assert store_release_items(session, release.id, items) == len(items)
        return release.id


def test_release_items_read_back_in_order_batch_by_batch(bank_url: str) -> None:
    items = [(i // 4, i % 2, i % 3, f'{{"n":{i % 5}}}') for i in range(11)]  # 5 distinct bodies
    release_id = _release_with_items(bank_url, items)
    engine = get_engine(bank_url)
    for batch in (1, 2, 11, 100):
        read = list(read_release_items(engine, release_id, batch=batch))
        assert [(r.template_position, r.seed, r.sample_index, r.body) for r in read] == items
        assert [r.ordinal for r in read] == list(range(11))
    with open_session(bank_url) as session:
        assert session.scalar(sa.select(sa.func.count()).select_from(ItemRow)) == 5


def test_reading_release_items_holds_no_transaction_open(tmp_path) -> None:
    """A long export must not keep others from writing (SQLite locks the file while a read is open)."""
    url = f"sqlite:///{tmp_path / 'bank.sqlite'}"
    upgrade(url)
    release_id = _release_with_items(url, [(0, 0, i, f'{{"n":{i}}}') for i in range(4)])
    reading = read_release_items(get_engine(url), release_id, batch=2)
    next(reading)
    with open_session(url) as session:  # someone else writes meanwhile (e.g. a job's progress)
        create_bank(session, BankCreate(name="other", handler="synthetic", owner="bob"))
    assert [r.ordinal for r in reading] == [1, 2, 3]


def test_stored_items_are_append_only(bank_url: str) -> None:
    release_id = _release_with_items(bank_url, [(0, 0, 0, '{"n":1}')])
    with pytest.raises(ImmutableRecordError, match="append-only"), open_session(bank_url) as session:
        session.scalars(sa.select(ItemRow)).one().body = '{"n":2}'
    with pytest.raises(ImmutableRecordError, match="append-only"), open_session(bank_url) as session:
        session.delete(session.get(ReleaseItemRow, (release_id, 0)))
    engine = get_engine(bank_url)
    for statement in ("UPDATE items SET body = body", "DELETE FROM items", "UPDATE release_items SET seed = seed",
                      "DELETE FROM release_items"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), engine.begin() as connection:
            connection.execute(sa.text(statement))
    assert [r.body for r in read_release_items(engine, release_id)] == ['{"n":1}']


def test_plot_cache(bank_url: str) -> None:
    engine = get_engine(bank_url)
    assert cached_plot(engine, "a" * 64, 100, "r" * 64) is None
    store_plot(engine, "a" * 64, 100, "r" * 64, b"png one")
    store_plot(engine, "a" * 64, 100, "r" * 64, b"png two")  # another export stored it meanwhile: kept
    assert cached_plot(engine, "a" * 64, 100, "r" * 64) == b"png one"
    assert cached_plot(engine, "a" * 64, 120, "r" * 64) is None and cached_plot(engine, "a" * 64, 100, "s" * 64) is None


# --- settings -------------------------------------------------------------------------------------


def test_settings_and_urls(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv("ITEMSMITH_DATABASE_URL", raising=False)
    monkeypatch.setenv("ITEMSMITH_DATA_DIR", str(tmp_path))
    assert BankSettings().url == f"sqlite:///{tmp_path}/itemsmith.sqlite"
    monkeypatch.setenv("ITEMSMITH_DATABASE_URL", "postgresql://u@db:5432/bank")
    assert normalize_url().drivername == "postgresql+psycopg"  # psycopg 3, the `postgres` extra
    assert normalize_url("sqlite:///x.sqlite").drivername == "sqlite"


def test_a_sqlite_write_waits_for_another_past_pysqlite_s_five_seconds(tmp_path, monkeypatch) -> None:
    """Jobs of the default service share one SQLite file: a write that meets another one in progress
    waits for its commit (ITEMSMITH_SQLITE_BUSY_TIMEOUT_S), where pysqlite's default gave up after 5 s
    with "database is locked" and the job went back to the queue; the file is in WAL mode, so reads
    never wait for the writer."""
    import threading

    from sqlalchemy import text

    from itemsmith.templates_bank.storage import get_engine

    monkeypatch.setenv("ITEMSMITH_SQLITE_BUSY_TIMEOUT_S", "30")
    engine = get_engine(f"sqlite:///{tmp_path / 'busy.sqlite'}")
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE t (x INTEGER)"))
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    outcome: list[object] = []

    def second_writer() -> None:
        try:
            with engine.begin() as connection:
                connection.execute(text("INSERT INTO t VALUES (2)"))
            outcome.append("written")
        except Exception as exc:  # noqa: BLE001 - the outcome is what the test checks
            outcome.append(exc)

    with engine.begin() as first:
        first.execute(text("INSERT INTO t VALUES (1)"))  # holds the write lock until this block ends
        writer = threading.Thread(target=second_writer)
        writer.start()
        writer.join(timeout=6.5)  # past pysqlite's 5 s: the second write is still waiting, not failed
        assert writer.is_alive() and not outcome, outcome
        with engine.connect() as reader:  # WAL: a read does not wait for the open write
            assert reader.execute(text("SELECT count(*) FROM t")).scalar() == 0
    writer.join(timeout=30)
    assert outcome == ["written"]
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM t")).scalar() == 2
    engine.dispose()
