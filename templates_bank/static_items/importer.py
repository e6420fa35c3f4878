"""Importing an existing benchmark into a bank: one static version per group, with its verdicts.

`import_items` reads every row first (`read_groups`, streamed from the file: each row is checked
and kept only as its item's canonical JSON, by group); a row with a problem (a key that is not
one of its options, no series, a value of the wrong type, a group spread over two categories) is
reported with its number and column (`RowProblem`) and nothing is stored. Then each group becomes
a `static` template version (its source: the group's items, `items.static`), with the provenance
of the file (name, format, sha256), an ``audit`` verdict (the static audit of
`verification.audit.static`, group by group in the order the groups first appear, so duplicates
across groups are seen; skipped with ``audit=False``, for a large file whose release is audited
later), a ``structure`` verdict (the rows validated; its first items, which the bank's diversity
view reads) and an accepting ``decision``: an imported benchmark is audited, not filtered; a
reviewer rejects a group on the review page. Importing the same file again stores nothing new
(the versions are keyed by the items' hash); a changed group becomes a new version of its key.
`ImportProgress` counts the rows read and the groups stored as it goes; an import job commits
what is stored each time it reports, so an import that stopped half way is finished by running
it again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from itemsmith.items.hashing import canonical_json
from itemsmith.items.schema import Decision, Item, Provenance, RunStatus, StructureReport, Template
from itemsmith.items.static import static_source_of
from itemsmith.templates_bank.handler_identity import is_static_handler, static_handler
from itemsmith.templates_bank.static_items.formats import (
    ImportedRow,
    ImportFormat,
    RowError,
    column,
    local_source,
    normalize,
    read_rows,
)
from itemsmith.templates_bank.storage import (
    BankCreate,
    BankPublic,
    NotFoundError,
    add_template_version,
    create_bank,
    find_version,
    get_bank,
    record_verdict,
)
from itemsmith.verification.audit import AuditConfig
from itemsmith.verification.audit.static import StaticAuditor, StaticAuditReport, StaticGroup

__all__ = ["GroupRows", "ImportProgress", "ImportReport", "ItemImportError", "ProgressCallback", "RowProblem",
           "import_items", "read_groups"]

_SHOWN_ERRORS = 20
_STRUCTURE_ITEMS = 5
_ROWS_PER_TICK = 1000


class RowProblem(BaseModel):
    """Why a row (or the whole file) cannot be imported."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    row: int | None = Field(description="the row's number (from 1 in a JSON array, the line in JSON lines); "
                                        "None: the file as a whole")
    field: str | None = Field(None, description="the row's column (columns joined by +) it is about")
    message: str

    def __str__(self) -> str:
        if self.row is None:
            return self.message
        return f"row {self.row} ({self.field}): {self.message}" if self.field else f"row {self.row}: {self.message}"


class ItemImportError(ValueError):
    """The file cannot be imported (nothing was stored); ``problems`` lists each bad row, if any."""

    def __init__(self, message: str, problems: list[RowProblem] | None = None) -> None:
        self.problems = problems or []
        super().__init__(message)

    @classmethod
    def bad_rows(cls, source: str, problems: list[RowProblem]) -> ItemImportError:
        shown = "\n".join(f"  {p}" for p in problems[:_SHOWN_ERRORS])
        more = f"\n  ... and {len(problems) - _SHOWN_ERRORS} more" if len(problems) > _SHOWN_ERRORS else ""
        return cls(f"{source}: {len(problems)} bad row(s), nothing imported:\n{shown}{more}", problems)


class ImportReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bank: str
    source: str
    format: ImportFormat
    sha256: str
    rows: int
    groups: int
    new_versions: int
    unchanged_versions: int
    audited: bool = Field(True, description="False: imported without the static audit (audit the release)")
    groups_failing_audit: list[str] = Field(default_factory=list)
    elapsed_ms: float


def _file_sha256(path: Path) -> str:
    """sha256 of the file (of every file of a saved dataset folder, by name)."""
    digest = hashlib.sha256()
    for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if file.is_file():
            digest.update(f"{file.relative_to(path) if path.is_dir() else file.name}\0".encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


@dataclass
class GroupRows:
    """One group's rows, read: its first row whole (title, category, difficulty), every item as
    canonical JSON (compact until it is stored), the concepts of all of them."""

    first: ImportedRow
    items: list[str] = field(default_factory=list)
    concepts: dict[str, None] = field(default_factory=dict)
    rows: int = 0

    @property
    def group(self) -> str:
        return self.first.group

    @property
    def category(self) -> str:
        return self.first.category

    def item_models(self, limit: int | None = None) -> list[Item]:
        return [Item.model_validate_json(text) for text in self.items[:limit]]


class ImportProgress(BaseModel):
    """How far an import is: rows read (and checked), groups seen, groups stored."""

    model_config = ConfigDict(extra="forbid")

    phase: Literal["reading", "storing", "stored"]
    rows_parsed: int
    groups: int
    groups_stored: int


ProgressCallback = Callable[[ImportProgress], None]


def read_groups(source: str, fmt: ImportFormat, mapping: dict[str, list[str]], *, keep_items: bool = True,
                on_progress: ProgressCallback | None = None) -> tuple[int, list[GroupRows]]:
    """Every row of `source` by group, in the order the groups first appear, streamed from the file
    (`ItemImportError` listing every bad row). `keep_items`: False checks the rows and keeps none
    of their items (an upload's check). `on_progress` is called every `_ROWS_PER_TICK` rows."""
    errors: list[RowProblem] = []
    groups: dict[str, GroupRows] = {}
    count = 0
    try:
        for number, raw in read_rows(fmt, source):
            count += 1
            if on_progress is not None and count % _ROWS_PER_TICK == 0:
                on_progress(ImportProgress(phase="reading", rows_parsed=count, groups=len(groups), groups_stored=0))
            try:
                row = normalize(fmt, number, raw, mapping)
            except RowError as exc:
                errors.append(RowProblem(row=number, field=exc.field, message=str(exc)))
                continue
            group = groups.setdefault(row.group, GroupRows(row))
            if row.category != group.category:
                errors.append(RowProblem(row=number, field=column(fmt, mapping, "category"), message=(
                    f"group {row.group!r} is in category {group.category!r} (row {group.first.row}) and "
                    f"{row.category!r} here; map 'group' to a finer column")))
                continue
            group.rows += 1
            group.concepts.update(dict.fromkeys(row.concepts))
            if keep_items:
                group.items.append(canonical_json(row.item.model_dump(mode="json")))
    except (RowError, OSError, UnicodeDecodeError) as exc:
        raise ItemImportError.bad_rows(source, [RowProblem(row=None, message=str(exc))]) from None
    if not count:
        errors.append(RowProblem(row=None, message="the file holds no rows"))
    if errors:
        raise ItemImportError.bad_rows(source, errors)
    if on_progress is not None:
        on_progress(ImportProgress(phase="reading", rows_parsed=count, groups=len(groups), groups_stored=0))
    return count, list(groups.values())


def _bank(session: Session, name: str, owner: str, task: str) -> BankPublic:
    try:
        bank = get_bank(session, name, owner)
    except NotFoundError:
        return create_bank(session, BankCreate(name=name, handler=static_handler(name), task=task, owner=owner))
    if not is_static_handler(bank.handler):
        raise ItemImportError(f"bank {name!r} holds generated templates (handler {bank.handler!r}); import the "
                              "items into a bank of their own")
    return bank


def _template(group: GroupRows, provenance: Provenance) -> Template:
    first = group.first
    subcategory = first.item.metadata.get("subcategory")
    title = f"{first.category}: {subcategory}" if subcategory else f"{first.category}: {first.group}"
    return Template(id=first.group, source=static_source_of(group.items), title=title[:500],
                    category=first.category[:100], concepts=list(group.concepts), difficulty=first.difficulty,
                    provenance=provenance, kind="static")


def import_items(session: Session, bank: str, source: str, fmt: ImportFormat, *, owner: str, created_by: str,
                 mapping: dict[str, list[str]] | None = None, task: str = "", config: AuditConfig | None = None,
                 audit: bool = True, on_progress: ProgressCallback | None = None,
                 ) -> tuple[ImportReport, StaticAuditReport | None]:
    """Store `source`'s rows in `bank` (created when missing) as one static version per group, each
    with its structure, audit (unless not `audit`) and decision verdicts; nothing is stored when a
    row is bad (`ItemImportError`). `on_progress` is called while the rows are read and after
    each group is stored (flushed, not committed: an import job commits when it reports)."""
    started = time.monotonic()
    rows, groups = read_groups(source, fmt, mapping or {}, on_progress=on_progress)
    path = local_source(source, hf=fmt == "hf")[0]
    sha = _file_sha256(path)
    name = path.name
    target = _bank(session, bank, owner, task or f"items imported from {name}")
    provenance = Provenance(origin="imported", generator=None, source_file=name, source_format=fmt, source_sha256=sha)
    auditor = StaticAuditor(config) if audit else None
    new = unchanged = 0
    failing: list[str] = []
    for done, group in enumerate(groups, start=1):
        template = _template(group, provenance)
        items = group.item_models(None if auditor else _STRUCTURE_ITEMS)
        group.items = []  # stored in the template's source: let the rows go
        checked = auditor.add(StaticGroup(group.group, group.category, items)) if auditor else None
        if checked is not None and not checked.report.passed:
            failing.append(group.group)
        if find_version(session, target.id, template.content_hash) is not None:
            unchanged += 1
            add_template_version(session, target.id, template, created_by=created_by)  # same key, or a clear conflict
        else:
            version = add_template_version(session, target.id, template, created_by=created_by)
            new += 1
            # the rows' validation is this group's structure check: its first items, as a structure check keeps them
            record_verdict(session, version.id, StructureReport(
                status=RunStatus.ok, items=items[:_STRUCTURE_ITEMS], deterministic=True, seeds=[0],
                num_samples=group.rows))
            reasons = [f"imported: {group.rows} items of {name} ({fmt}, sha256 {sha[:12]})"]
            if checked is not None:
                record_verdict(session, version.id, checked.report)
                reasons.append(checked.report.summary())
            else:
                reasons.append("not audited at import: audit the release (itemsmith release audit)")
            record_verdict(session, version.id, Decision(accepted=True, stage="structure", reasons=reasons))
        if on_progress is not None:
            on_progress(ImportProgress(phase="storing" if done < len(groups) else "stored", rows_parsed=rows,
                                       groups=len(groups), groups_stored=done))
    return ImportReport(bank=target.name, source=name, format=fmt, sha256=sha, rows=rows, groups=len(groups),
                        new_versions=new, unchanged_versions=unchanged, audited=auditor is not None,
                        groups_failing_audit=failing,
                        elapsed_ms=(time.monotonic() - started) * 1000), auditor.report() if auditor else None
