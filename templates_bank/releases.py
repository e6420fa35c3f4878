"""Releases: a bank state frozen into an immutable, numbered release with a manifest and its items.

`create_release` picks the bank's releasable versions (see `storage.releasable_versions`),
takes each (template, seed) run recorded under its key by an earlier release (`item_runs`: the
key covers the template source, the handler's code and data, the seed, the size and the
generator), generates the others in the sandbox (in parallel over the pools of their handlers
only, see `regeneration`) and records them, stores the items once with the release
(`storage.store_release_items`: content-addressed, in order) and records the sha256 of each template's items in the manifest, so
the manifest pins the *content*: templates and versions, seeds, judge and student configs, IRT
parameters, counts per category and a content checksum, which covers the items through those
hashes. Export, evaluation, re-verification and the audit read the stored items (`Release.items`,
checked against the manifest's hashes: `ReleaseIntegrityError` on any difference); only
fresh-instance evaluation and `templates_bank.reproducibility` (``itemsmith release verify``:
regenerate and compare bytes) run templates again.

A release made before items were stored has none: `Release.items` regenerates its items from the
stored sources and seeds (checked against the manifest, as then) until ``release verify`` has
regenerated them once, found them identical to the manifest's hashes and stored them.

Handlers are named by `HandlerRef` (name and content hash), never by where they live on this
machine: `Release.handlers` maps each to its local spec for regeneration (manifests stored
before this carry the spec string itself, which is still accepted).

The manifest's ``checksum`` is the sha256 of the canonical JSON of the manifest without
``release``, ``created_at``, ``created_by``, ``note`` and ``checksum``: two releases with the
same content have the same checksum.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import datetime
from itertools import groupby
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from itemsmith.handlers import BUILTIN_HANDLERS
from itemsmith.items.hashing import canonical_json, sha256_hex
from itemsmith.items.schema import IRTParameters, Item, ItemPool, TemplateKind
from itemsmith.items.static import parse_static_source
from itemsmith.templates_bank.handler_identity import HandlerRef, handler_ref
from itemsmith.templates_bank.item_runs import handler_files_sha256, run_key
from itemsmith.templates_bank.regeneration import TemplateRun, bodies_digest, items_digest, regenerate
from itemsmith.templates_bank.storage import (
    NotFoundError,
    ReleaseRow,
    ReleaseTemplateRow,
    StudentResponseRow,
    TemplateVersionPublic,
    TemplateVersionRow,
    VerdictRow,
    get_bank,
    get_bank_by_id,
    has_stored_items,
    read_item_runs,
    read_release_items,
    releasable_versions,
    store_item_runs,
    store_release_items,
    utcnow,
)

if TYPE_CHECKING:
    from itemsmith.sandbox import SandboxLimits

__all__ = ["CategoryCount", "ItemSpool", "Release", "ReleaseCounts", "ReleaseCreate", "ReleaseError",
           "ReleaseIntegrityError", "ReleaseManifest", "ReleaseRun", "ReleaseTemplate", "StoredItems",
           "create_release", "get_release", "item_body", "list_releases", "parse_release_ref", "store_items"]

_NOT_CONTENT = {"release", "created_at", "created_by", "note", "checksum"}


class ReleaseError(RuntimeError):
    """A release cannot be created as asked."""


class ReleaseIntegrityError(ReleaseError):
    """Regenerated items differ from what the release recorded."""


class ReleaseCreate(BaseModel):
    """What to freeze: every releasable template of ``bank`` (or the named ones), each run on
    every seed with ``num_samples`` items per run."""

    model_config = ConfigDict(extra="forbid")

    bank: str
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    num_samples: int = Field(5, ge=1, le=1000)
    template_ids: list[str] | None = Field(None, description="default: every releasable template")
    judges: list[dict[str, Any]] | None = Field(None, description="judge configs; default: the judges on record")
    students: list[dict[str, Any]] | None = Field(None, description="student configs; default: those on record")
    created_by: str = Field(min_length=1, max_length=200)
    note: str = ""
    owner: str | None = Field(None, description="the bank's owner (needed when several owners use the name)")

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds) or min(seeds) < 0:
            raise ValueError("seeds must be distinct non-negative integers")
        return seeds


class ReleaseTemplate(BaseModel):
    """One template version of a release and how its items are regenerated."""

    model_config = ConfigDict(extra="forbid")

    template_id: str
    version: str = Field(description="sha256 of the template source")
    title: str
    category: str
    concepts: list[str]
    handler: HandlerRef | str = Field(description="the handler by name and content hash (a string: an old manifest)")
    difficulty: str | None
    seeds: list[int]
    num_samples: int
    items: int
    items_sha256: str = Field(description="sha256 of the items as canonical JSON lines, seed by seed")
    irt: IRTParameters | None = None
    # Per-template properties of a release go here. Each new one is left out of the dump at its
    # default, as `kind` is when "code", so that manifests written before it keep their checksums.
    kind: TemplateKind = Field("code", exclude_if=lambda kind: kind == "code",
                               description="code: regenerated from its source; static: stored items (imported)")
    pool: ItemPool | None = Field(None, exclude_if=lambda pool: pool is None,
                                  description="the item pool its newest audit found (how many different items it "
                                              "makes); fresh-instance evaluation warns when it would repeat items")


def _canonical(value: Any) -> Any:
    """Free-form JSON with keys sorted at every level (JSONB and JSON columns keep different
    key orders; exported bytes must not depend on the backend)."""
    return json.loads(canonical_json(value))


class CategoryCount(BaseModel):
    model_config = ConfigDict(extra="forbid")

    templates: int
    items: int


class ReleaseCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    templates: int
    items: int
    by_category: dict[str, CategoryCount]

    @field_validator("by_category")
    @classmethod
    def _sorted(cls, by_category: dict[str, CategoryCount]) -> dict[str, CategoryCount]:
        return dict(sorted(by_category.items()))


class ReleaseManifest(BaseModel):
    """Everything a release pins down; stored with the release and exported as manifest.json."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["itemsmith-release/1"] = "itemsmith-release/1"
    bank: str
    handler: HandlerRef | str
    task: str
    release: int
    created_at: datetime
    created_by: str
    note: str
    templates: list[ReleaseTemplate]
    judges: list[dict[str, Any]]
    students: list[dict[str, Any]]
    counts: ReleaseCounts
    checksum: str

    @field_validator("judges", "students")
    @classmethod
    def _canonical_configs(cls, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _canonical(configs)

    @property
    def ref(self) -> str:
        """``bank@number``."""
        return f"{self.bank}@{self.release}"

    def content_checksum(self) -> str:
        return sha256_hex(canonical_json(self.model_dump(mode="json", exclude=_NOT_CONTENT)))


def item_body(item: Item) -> str:
    """An item as stored and as `itemsmith release verify` compares it: its JSON, keys in the
    order the item has them (exports write metadata in that order)."""
    return json.dumps(item.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class ReleaseRun:
    """The items of one (template, seed) run of a release."""

    seed: int
    items: list[Item]


@dataclass(frozen=True)
class StoredItems:
    """Where a release's stored items are read: its row in a bank database. They are read through
    connections of their own: a release's items are seen once the transaction that created it
    committed."""

    engine: Engine
    release_id: int

    def runs(self) -> Iterator[tuple[int, ReleaseRun]]:
        """(template position, run) in release order; `ReleaseIntegrityError` for an item whose
        JSON no longer matches its hash."""
        stored = read_release_items(self.engine, self.release_id)
        for (position, seed), group in groupby(stored, key=lambda s: (s.template_position, s.seed)):
            items = []
            for row in group:
                if sha256_hex(row.body) != row.sha256:
                    raise ReleaseIntegrityError(f"stored item {row.sha256[:12]} (item {row.ordinal} of the release) "
                                                "no longer matches its hash: the database was changed")
                items.append(Item.model_validate(json.loads(row.body)))
            yield position, ReleaseRun(seed, items)


@dataclass(frozen=True)
class Release:
    """A release's manifest, the template sources (by version hash) its items come from and where
    its stored items are (None: a release made before items were stored, regenerated when read)."""

    manifest: ReleaseManifest
    sources: dict[str, str]
    handlers: dict[HandlerRef, str] = field(default_factory=dict)  # a handler's identity -> its local spec
    bank_id: int | None = None  # the bank it was read from (names are unique per owner only)
    release_id: int | None = None  # its row there
    stored: StoredItems | None = field(default=None, compare=False)

    def local_handler(self, entry: ReleaseTemplate) -> str:
        """Where `entry`'s handler is on this machine (`ReleaseError` when it is not here)."""
        return _local_handler(entry.handler, self.handlers)

    def local_bank_handler(self) -> str:
        """Where the bank's handler (the manifest's) is on this machine."""
        return _local_handler(self.manifest.handler, self.handlers)

    def runs(self) -> list[TemplateRun]:
        return _runs(self.manifest.templates, self.sources, self.handlers)

    def static_templates(self) -> list[str]:
        """The templates whose items are stored (imported), not generated: no fresh instances."""
        return [t.template_id for t in self.manifest.templates if t.kind == "static"]

    def refuse_fresh_instances(self, what: str) -> None:
        """`ReleaseError` when the release holds static items, which have no fresh instances."""
        static = self.static_templates()
        if static:
            shown = ", ".join(static[:5]) + (f" and {len(static) - 5} more" if len(static) > 5 else "")
            raise ReleaseError(f"{what}: {self.manifest.ref} holds static items imported from an existing benchmark "
                               f"({shown}); they have no fresh instances: evaluate the release's own items instead")

    def items(self, *, workers: int = 1,
              limits: SandboxLimits | None = None) -> Iterator[tuple[ReleaseTemplate, ReleaseRun]]:
        """The release's items run by run, as stored (a release made before items were stored:
        regenerated in the sandbox with ``workers`` and ``limits``). After each template's last
        run its items are checked against the manifest (`ReleaseIntegrityError` if they differ)."""
        if self.stored is not None:
            return _checked(self.manifest, self.stored.runs(), "stored")
        return self.regenerated(workers=workers, limits=limits)

    def regenerated(self, *, workers: int = 1,
                    limits: SandboxLimits | None = None) -> Iterator[tuple[ReleaseTemplate, ReleaseRun]]:
        """The release's items regenerated in the sandbox from sources and seeds, checked as `items`."""
        position = {t.template_id: i for i, t in enumerate(self.manifest.templates)}
        runs = ((position[r.run.template_id], ReleaseRun(r.seed, r.items))
                for r in regenerate(self.runs(), workers=workers, limits=limits))
        return _checked(self.manifest, runs, "regenerated")


def _checked(manifest: ReleaseManifest, runs: Iterable[tuple[int, ReleaseRun]],
             how: Literal["stored", "regenerated"]) -> Iterator[tuple[ReleaseTemplate, ReleaseRun]]:
    """The runs with their manifest entries; each template's items checked against the manifest
    once its last run is read (also a template without items)."""
    templates = manifest.templates
    position, digest, count = 0, hashlib.sha256(), 0

    def check(entry: ReleaseTemplate) -> None:
        if digest.hexdigest() != entry.items_sha256 or count != entry.items:
            why = ("did numpy, pandas or a handler's data change?" if how == "regenerated"
                   else "the database was changed")
            raise ReleaseIntegrityError(
                f"{manifest.ref}: template {entry.template_id!r}: {how} {count} items with sha256 "
                f"{digest.hexdigest()[:12]}, the release recorded {entry.items} with {entry.items_sha256[:12]} ({why})")

    for run_position, run in runs:
        if not position <= run_position < len(templates):
            raise ReleaseIntegrityError(f"{manifest.ref}: {how} items out of the manifest's order")
        while position < run_position:
            check(templates[position])
            position, digest, count = position + 1, hashlib.sha256(), 0
        items_digest(digest, run.items)
        count += len(run.items)
        yield templates[position], run
    for entry in templates[position:]:
        check(entry)
        digest, count = hashlib.sha256(), 0


class ItemSpool:
    """Items held in a temporary file (in memory while small) until they are stored: a release's
    items are written to the database only once all of them are generated and checked, so no
    transaction is held open while the sandbox runs."""

    def __init__(self) -> None:
        self._file: IO[str] = tempfile.SpooledTemporaryFile(max_size=32 << 20, mode="w+", encoding="utf-8",
                                                            newline="\n")

    def add(self, position: int, run: ReleaseRun) -> None:
        self.add_bodies(position, run.seed, [item_body(item) for item in run.items])

    def add_bodies(self, position: int, seed: int, bodies: list[str]) -> None:
        """Add one run's items as stored (`item_body`)."""
        for index, body in enumerate(bodies):
            self._file.write(f"{position}\t{seed}\t{index}\t{body}\n")  # JSON escapes tabs and newlines

    def rows(self) -> Iterator[tuple[int, int, int, str]]:
        """(template position, seed, index in the run, item JSON), in the order added."""
        self._file.seek(0)
        for line in self._file:
            position, seed, index, body = line.rstrip("\n").split("\t", 3)
            yield int(position), int(seed), int(index), body

    def __enter__(self) -> ItemSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()


def store_items(session: Session, release_id: int, spool: ItemSpool) -> StoredItems:
    """Store the spooled items as the release's (in the session's transaction)."""
    store_release_items(session, release_id, spool.rows())
    return StoredItems(_engine(session), release_id)


def _engine(session: Session) -> Engine:
    bind = session.get_bind()
    return bind if isinstance(bind, Engine) else bind.engine


def _local_handler(handler: HandlerRef | str, handlers: dict[HandlerRef, str]) -> str:
    if isinstance(handler, str):
        return handler
    local = handlers.get(handler)
    if local is None and handler.name in BUILTIN_HANDLERS and handler_ref(handler.name) == handler:
        local = handler.name  # a built-in is the same on every server with the same itemsmith
    if local is None:
        raise ReleaseError(f"handler {handler.label} is not on this server (its files changed or were removed)")
    return local


def _runs(templates: list[ReleaseTemplate], sources: dict[str, str], handlers: dict[HandlerRef, str]) -> list[TemplateRun]:
    return [TemplateRun(template_id=t.template_id, source=sources[t.version], handler=_local_handler(t.handler, handlers),
                        seeds=tuple(t.seeds), num_samples=t.num_samples, kind=t.kind) for t in templates]


def _handlers_of(specs: Iterator[str] | list[str]) -> dict[HandlerRef, str]:
    """Each handler's local spec by its identity: name and hash (built-ins defined in one module
    share the module's hash)."""
    return {handler_ref(spec): spec for spec in dict.fromkeys(specs)}


_REF = re.compile(r"^(?P<bank>(?:[^/@]+/)?[a-z0-9][a-z0-9_.-]*?)(?:@(?P<number>[0-9]+|latest))?$")


def parse_release_ref(ref: str) -> tuple[str, int | None]:
    """``bank@3`` -> ("bank", 3); ``bank`` or ``bank@latest`` -> ("bank", None); ``owner/bank@3`` ->
    ("owner/bank", 3) (`get_bank` reads the owner: for a name several owners use)."""
    match = _REF.match(ref)
    if match is None:
        raise ValueError(f"bad release {ref!r}; write BANK@NUMBER (e.g. curated@1) or BANK@latest")
    number = match["number"]
    return match["bank"], None if number in (None, "latest") else int(number)


def _latest_payloads(session: Session, version_ids: list[int], stage: str) -> dict[int, dict[str, Any]]:
    rows = session.execute(select(VerdictRow.template_version_id, VerdictRow.payload)
                           .where(VerdictRow.template_version_id.in_(version_ids), VerdictRow.stage == stage)
                           .order_by(VerdictRow.id))
    return {version_id: payload for version_id, payload in rows}  # noqa: C416 - dict(result) reads a Result as a mapping


def _judges_on_record(session: Session, version_ids: list[int]) -> list[dict[str, Any]]:
    names = session.scalars(select(VerdictRow.model).distinct()
                            .where(VerdictRow.template_version_id.in_(version_ids), VerdictRow.stage == "judge",
                                   VerdictRow.model.is_not(None)))
    return [{"name": name} for name in sorted(n for n in names if n is not None)]


def _students_on_record(session: Session, version_ids: list[int]) -> list[dict[str, Any]]:
    pairs = session.execute(select(StudentResponseRow.model, StudentResponseRow.rank).distinct()
                            .where(StudentResponseRow.template_version_id.in_(version_ids)))
    return [{"name": name, "rank": rank} for name, rank in sorted(pairs, key=lambda p: (p[1], p[0]))]


def _chosen_versions(session: Session, bank_id: int, request: ReleaseCreate) -> list[TemplateVersionPublic]:
    versions = releasable_versions(session, bank_id)
    if request.template_ids is None:
        chosen = versions
    else:
        by_key = {v.template_key: v for v in versions}
        missing = [t for t in request.template_ids if t not in by_key]
        if missing:
            raise ReleaseError(f"not releasable (no approved or accepted version): {', '.join(missing)}")
        chosen = [by_key[t] for t in request.template_ids]
    if not chosen:
        raise ReleaseError(f"bank {request.bank!r} has no approved or accepted template version to release")
    return chosen


def _sampling(version: TemplateVersionPublic, seeds: list[int], num_samples: int) -> dict[str, Any]:
    """A code version runs on every seed; a static one is its stored items, once (seed 0)."""
    if version.kind == "static":
        return {"seeds": [0], "num_samples": len(parse_static_source(version.source))}
    return {"seeds": seeds, "num_samples": num_samples}


def create_release(session: Session, request: ReleaseCreate, *, workers: int = 1,
                   limits: SandboxLimits | Callable[[], SandboxLimits] | None = None, reuse: bool = True,
                   on_progress: Callable[[int, int], None] | None = None) -> Release:
    """Freeze the bank into its next release: take each (template, seed) run's items from the run
    recorded under its key (`item_runs`; any earlier release, any bank) or, with ``reuse`` False
    or none recorded, generate it (in the sandbox, ``workers`` per handler; pools start only for
    the handlers with runs to generate), record item counts and hashes, store the items with the
    release and record the generated runs. Nothing is written until every run is done (the items
    wait in an `ItemSpool`). ``limits`` may be a function giving them, called only when a template
    runs. Raises `ReleaseError` (nothing releasable, unknown template), `ReleaseIntegrityError` (a
    recorded item was changed in the database) or `RegenerationError` (a run failed).
    `on_progress(done, total)` follows the (template, seed) runs. With `request.owner`, the bank
    is that owner's (names are unique per owner). The returned release reads its stored items
    once the session's transaction is committed."""
    bank = get_bank(session, request.bank, request.owner)
    versions = _chosen_versions(session, bank.id, request)
    version_ids = [v.id for v in versions]
    irt = _latest_payloads(session, version_ids, "irt")
    pools = {version: payload["pool"] for version, payload in _latest_payloads(session, version_ids, "audit").items()
             if payload.get("pool")}
    seeds = list(request.seeds)
    handlers = _handlers_of([bank.handler, *(v.handler or bank.handler for v in versions)])
    draft = [ReleaseTemplate(template_id=v.template_key, version=v.content_hash, title=v.title, category=v.category,
                             concepts=v.concepts, handler=handler_ref(v.handler or bank.handler),
                             difficulty=v.difficulty, kind=v.kind, **_sampling(v, seeds, request.num_samples),
                             items=0, items_sha256="",
                             irt=IRTParameters.model_validate(irt[v.id]) if v.id in irt else None,
                             pool=ItemPool.model_validate(pools[v.id]) if v.id in pools else None)
             for v in versions]
    sources = {v.content_hash: v.source for v in versions}
    runs = _runs(draft, sources, handlers)
    keys = _run_keys(runs)
    recorded = _recorded_runs(session, keys.values()) if reuse else {}
    # only the runs not recorded go to the sandbox: only their handlers' pools start
    missing = [replace(run, seeds=tuple(s for s in run.seeds if keys.get((i, s)) not in recorded))
               for i, run in enumerate(runs)]
    digests = [hashlib.sha256() for _ in draft]
    counts = [0] * len(draft)
    new_runs: dict[str, list[str]] = {}
    total_runs = sum(len(run.seeds) for run in runs)
    done = 0
    to_generate = [run for run in missing if run.seeds]
    if callable(limits):  # reading sandbox settings imports the sandbox: only when a template runs
        limits = limits() if any(run.kind == "code" for run in to_generate) else None
    with (ItemSpool() as spool, closing(regenerate(to_generate, workers=workers, limits=limits)) as generated):
        for i, run in enumerate(runs):
            for seed in run.seeds:
                key = keys.get((i, seed))
                if key in recorded:
                    bodies = recorded[key]
                else:
                    run_items = next(generated)
                    assert (run_items.run.template_id, run_items.seed) == (run.template_id, seed)
                    bodies = [item_body(item) for item in run_items.items]
                    if key is not None:
                        new_runs[key] = [sha256_hex(body) for body in bodies]
                bodies_digest(digests[i], bodies)
                counts[i] += len(bodies)
                spool.add_bodies(i, seed, bodies)
                done += 1
                if on_progress is not None:
                    on_progress(done, total_runs)
        for extra in generated:  # none: this runs the regeneration to its end, which closes its pools
            raise AssertionError(f"regeneration gave a run not asked for: {extra.run.template_id!r} seed {extra.seed}")
        templates = [t.model_copy(update={"items": n, "items_sha256": d.hexdigest()})
                     for t, n, d in zip(draft, counts, digests, strict=True)]
        number = (session.scalar(select(func.max(ReleaseRow.number)).where(ReleaseRow.bank_id == bank.id)) or 0) + 1
        judges = request.judges if request.judges is not None else _judges_on_record(session, version_ids)
        students = request.students if request.students is not None else _students_on_record(session, version_ids)
        manifest = _manifest(bank.name, handler_ref(bank.handler), bank.task, number, request, templates, judges,
                             students)
        row = ReleaseRow(bank_id=bank.id, number=number, manifest=manifest.model_dump(mode="json"),
                         checksum=manifest.checksum, created_by=request.created_by, created_at=manifest.created_at)
        session.add(row)
        session.flush()
        session.add_all(ReleaseTemplateRow(release_id=row.id, position=i, template_version_id=v.id, seeds=t.seeds,
                                           num_samples=t.num_samples, item_count=t.items, items_sha256=t.items_sha256)
                        for i, (v, t) in enumerate(zip(versions, templates, strict=True)))
        session.flush()
        stored = store_items(session, row.id, spool)
        store_item_runs(session, new_runs)
    return Release(manifest=manifest, sources=sources, handlers=handlers, bank_id=bank.id, release_id=row.id,
                   stored=stored)


def _run_keys(runs: list[TemplateRun]) -> dict[tuple[int, int], str]:
    """(template position, seed) -> the run's key, for each run of a code template (a static one's
    items are read from its source, no sandbox)."""
    files = {spec: handler_files_sha256(spec) for spec in {run.handler for run in runs if run.kind == "code"}}
    return {(i, seed): run_key(run.source, run.kind, handler_ref(run.handler), files[run.handler], seed,
                               run.num_samples)
            for i, run in enumerate(runs) if run.kind == "code" for seed in run.seeds}


def _recorded_runs(session: Session, keys: Iterable[str]) -> dict[str, list[str]]:
    """The recorded runs among `keys`: key -> its items' JSON, each checked against its hash."""
    runs: dict[str, list[str]] = {}
    for key, items in read_item_runs(session, keys).items():
        for digest, body in items:
            if body is None or sha256_hex(body) != digest:
                raise ReleaseIntegrityError(f"stored item {digest[:12]} is missing or no longer matches its hash (the "
                                            "database was changed): `release create --regenerate` runs every template")
        runs[key] = [body for _, body in items if body is not None]
    return runs


def _manifest(bank: str, handler: HandlerRef, task: str, number: int, request: ReleaseCreate,
              templates: list[ReleaseTemplate], judges: list[dict[str, Any]],
              students: list[dict[str, Any]]) -> ReleaseManifest:
    by_category: dict[str, CategoryCount] = {}
    for t in templates:
        count = by_category.get(t.category, CategoryCount(templates=0, items=0))
        by_category[t.category] = CategoryCount(templates=count.templates + 1, items=count.items + t.items)
    counts = ReleaseCounts(templates=len(templates), items=sum(t.items for t in templates), by_category=by_category)
    manifest = ReleaseManifest(bank=bank, handler=handler, task=task, release=number, created_at=utcnow(),
                               created_by=request.created_by, note=request.note, templates=templates,
                               judges=judges, students=students, counts=counts, checksum="")
    return manifest.model_copy(update={"checksum": manifest.content_checksum()})


def get_release(session: Session, bank: str, number: int | None = None, owner: str | None = None, *,
                bank_id: int | None = None) -> Release:
    """A release of the bank (the latest when ``number`` is None) with its template sources, local
    handlers and stored items (none for a release made before items were stored); with `owner`,
    the bank is that owner's (names are unique per owner). With `bank_id` (what jobs and the
    service use), the bank is that one, and `NotFoundError` unless it is named `bank` (and is
    `owner`'s): another owner's bank of the same name is never read."""
    if bank_id is None:
        bank_row = get_bank(session, bank, owner)
    else:
        bank_row = get_bank_by_id(session, bank_id)
        if bank_row.name != bank or (owner is not None and bank_row.owner != owner):
            raise NotFoundError(f"bank {bank!r} is not bank {bank_id}")
    query = select(ReleaseRow).where(ReleaseRow.bank_id == bank_row.id)
    query = query.where(ReleaseRow.number == number) if number is not None else query.order_by(ReleaseRow.number.desc())
    row = session.scalars(query.limit(1)).first()
    if row is None:
        which = f"release {number}" if number is not None else "a release"
        raise NotFoundError(f"bank {bank!r} has no {which} (create one with `itemsmith release create {bank}`)")
    manifest = ReleaseManifest.model_validate(row.manifest)
    if manifest.content_checksum() != row.checksum:
        raise ReleaseIntegrityError(f"{manifest.ref}: the stored manifest no longer matches its checksum")
    rows = session.execute(select(TemplateVersionRow.content_hash, TemplateVersionRow.source,
                                  TemplateVersionRow.handler)
                           .join(ReleaseTemplateRow, ReleaseTemplateRow.template_version_id == TemplateVersionRow.id)
                           .where(ReleaseTemplateRow.release_id == row.id)).all()
    sources = {content_hash: source for content_hash, source, _ in rows}
    handlers = _handlers_of([bank_row.handler, *(handler or bank_row.handler for _, _, handler in rows)])
    stored = StoredItems(_engine(session), row.id) if has_stored_items(session, row.id) else None
    return Release(manifest=manifest, sources=sources, handlers=handlers, bank_id=bank_row.id, release_id=row.id,
                   stored=stored)


def list_releases(session: Session, bank: str) -> list[ReleaseManifest]:
    """The bank's release manifests, oldest first."""
    bank_row = get_bank(session, bank)
    rows = session.scalars(select(ReleaseRow.manifest).where(ReleaseRow.bank_id == bank_row.id)
                           .order_by(ReleaseRow.number))
    return [ReleaseManifest.model_validate(m) for m in rows]
