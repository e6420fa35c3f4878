"""A release's items, stored once (``items``, ``release_items``), and plots of them (``item_plots``).

- ``items``: content-addressed item JSON: ``sha256`` is the hash of ``body``, the item as its
  template's run gave it (JSON text, key order kept: exports write it as stored). An item two
  releases share is stored once.
- ``release_items``: a release's items in order (``ordinal`` 0, 1, ...), each with where it
  comes from (the template's position in the manifest, the seed, its index in that run).
- ``item_runs``: the items one (template, seed) run gave, in order, by the run's key (a sha256 over
  everything the items depend on, see `templates_bank.item_runs`): what `release create` reuses
  instead of running the template again.
- ``item_plots``: PNG plots rendered for exports, by item hash (the sha256 of the item's JSON, as
  in ``items``), dpi and renderer (a hash of the plotting code and library), so a plot is drawn once.

Items, release items and item runs are append-only (the session refuses to flush a change, the migration's
triggers refuse it in the database). Rows are written in batches and read in short
transactions of one batch each (keyset on ``ordinal``), so a long export holds no transaction
open and memory stays flat.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, ForeignKey, Integer, LargeBinary, String, Text, event, exists, insert, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from itemsmith.items.hashing import sha256_hex
from itemsmith.templates_bank.storage._models import Base, ImmutableRecordError
from itemsmith.templates_bank.storage._types import conflict_insert

__all__ = ["ItemPlotRow", "ItemRow", "ItemRunRow", "ReleaseItemRow", "StoredItem", "cached_plot", "has_stored_items",
           "read_item_runs", "read_release_items", "store_item_runs", "store_plot", "store_release_items"]

BATCH = 1000
_IN_BATCH = 500  # keys per IN (...) query: SQLite allows 32,766 parameters, older builds 999


class ItemRow(Base):
    """One item's JSON, keyed by its sha256."""

    __tablename__ = "items"

    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    body: Mapped[str] = mapped_column(Text)


class ReleaseItemRow(Base):
    """The item at ``ordinal`` of a release, and the (template, seed, index) it comes from."""

    __tablename__ = "release_items"

    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id"), primary_key=True)
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    template_position: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    sample_index: Mapped[int] = mapped_column(Integer)
    item_sha256: Mapped[str] = mapped_column(ForeignKey("items.sha256"))


class ItemRunRow(Base):
    """The items (their sha256s, in order) of the (template, seed) run with key ``key``."""

    __tablename__ = "item_runs"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    items: Mapped[list[Any]]


class ItemPlotRow(Base):
    """An item's PNG plot at one dpi, drawn by one renderer."""

    __tablename__ = "item_plots"

    item_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    dpi: Mapped[int] = mapped_column(Integer, primary_key=True)
    renderer: Mapped[str] = mapped_column(String(64), primary_key=True)
    png: Mapped[bytes] = mapped_column(LargeBinary)


_APPEND_ONLY = (ItemRow, ReleaseItemRow, ItemRunRow)


@event.listens_for(Session, "before_flush")
def _refuse_changes(session: Session, flush_context: object, instances: object) -> None:
    for obj in (*session.dirty, *session.deleted):
        if isinstance(obj, _APPEND_ONLY) and (obj in session.deleted or session.is_modified(obj)):
            raise ImmutableRecordError(f"{type(obj).__tablename__} records are append-only")


@dataclass(frozen=True)
class StoredItem:
    """One item of a release as stored: where it comes from and its JSON (``body``, whose sha256
    is ``sha256``)."""

    ordinal: int
    template_position: int
    seed: int
    sample_index: int
    sha256: str
    body: str


def _insert_ignoring_duplicates(session: Session, table: type[Base], rows: list[dict[str, Any]]) -> None:
    """INSERT the rows, skipping those whose key is stored already (another release, another writer)."""
    if not rows:
        return
    session.execute(conflict_insert(session.get_bind().dialect.name)(table).on_conflict_do_nothing(), rows)


def store_release_items(session: Session, release_id: int, items: Iterable[tuple[int, int, int, str]]) -> int:
    """Store a release's items, in order, from ``(template_position, seed, sample_index, body)``;
    returns how many. Items stored before (by any release) are not stored again."""
    ordinal = 0
    bodies: dict[str, str] = {}
    links: list[dict[str, Any]] = []

    def flush() -> None:
        _insert_ignoring_duplicates(session, ItemRow, [{"sha256": h, "body": b} for h, b in bodies.items()])
        if links:
            session.execute(insert(ReleaseItemRow), links)
        bodies.clear()
        links.clear()

    for template_position, seed, sample_index, body in items:
        digest = sha256_hex(body)
        bodies[digest] = body
        links.append({"release_id": release_id, "ordinal": ordinal, "template_position": template_position,
                      "seed": seed, "sample_index": sample_index, "item_sha256": digest})
        ordinal += 1
        if len(links) == BATCH:
            flush()
    flush()
    return ordinal


def has_stored_items(session: Session, release_id: int) -> bool:
    """Whether the release's items are stored (releases made before items were stored are not)."""
    return bool(session.scalar(select(exists().where(ReleaseItemRow.release_id == release_id))))


def read_release_items(engine: Engine, release_id: int, *, batch: int = BATCH) -> Iterator[StoredItem]:
    """The release's stored items in order, read ``batch`` at a time, each batch in a short
    transaction of its own (nothing held open while the caller works on the items)."""
    after = -1
    while True:
        query = (select(ReleaseItemRow.ordinal, ReleaseItemRow.template_position, ReleaseItemRow.seed,
                        ReleaseItemRow.sample_index, ReleaseItemRow.item_sha256, ItemRow.body)
                 .join(ItemRow, ItemRow.sha256 == ReleaseItemRow.item_sha256)
                 .where(ReleaseItemRow.release_id == release_id, ReleaseItemRow.ordinal > after)
                 .order_by(ReleaseItemRow.ordinal).limit(batch))
        with engine.connect() as connection:
            rows = connection.execute(query).all()
        for row in rows:
            yield StoredItem(*row)
        if len(rows) < batch:
            return
        after = rows[-1].ordinal


def store_item_runs(session: Session, runs: dict[str, list[str]]) -> None:
    """Record each run's items (``key`` -> the sha256s of its items, stored in ``items``) in the
    session's transaction; a run recorded before (by another release) is kept as it is."""
    rows = [{"key": key, "items": hashes} for key, hashes in runs.items()]
    for start in range(0, len(rows), BATCH):
        _insert_ignoring_duplicates(session, ItemRunRow, rows[start:start + BATCH])


def read_item_runs(session: Session, keys: Iterable[str]) -> dict[str, list[tuple[str, str | None]]]:
    """The recorded runs among ``keys``: key -> its items as (sha256, JSON as stored; None if it
    is missing), in order. The caller checks each JSON against its hash."""
    wanted = sorted(set(keys))
    runs: dict[str, list[str]] = {}
    for start in range(0, len(wanted), _IN_BATCH):
        query = select(ItemRunRow.key, ItemRunRow.items).where(ItemRunRow.key.in_(wanted[start:start + _IN_BATCH]))
        runs.update((key, list(hashes)) for key, hashes in session.execute(query).all())
    needed = sorted({digest for hashes in runs.values() for digest in hashes})
    bodies: dict[str, str] = {}
    for start in range(0, len(needed), _IN_BATCH):
        query = select(ItemRow.sha256, ItemRow.body).where(ItemRow.sha256.in_(needed[start:start + _IN_BATCH]))
        bodies.update(session.execute(query).all())
    return {key: [(digest, bodies.get(digest)) for digest in hashes] for key, hashes in runs.items()}


def cached_plot(engine: Engine, item_sha256: str, dpi: int, renderer: str) -> bytes | None:
    """The item's plot drawn before by the same renderer at the same dpi, if any."""
    with engine.connect() as connection:
        return connection.scalar(select(ItemPlotRow.png).where(
            ItemPlotRow.item_sha256 == item_sha256, ItemPlotRow.dpi == dpi, ItemPlotRow.renderer == renderer))


def store_plot(engine: Engine, item_sha256: str, dpi: int, renderer: str, png: bytes) -> None:
    """Keep a plot (committed at once; a plot another export stored meanwhile is kept as it is)."""
    with Session(engine) as session, session.begin():
        _insert_ignoring_duplicates(session, ItemPlotRow,
                                    [{"item_sha256": item_sha256, "dpi": dpi, "renderer": renderer, "png": png}])
