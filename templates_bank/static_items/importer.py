"""Importing an existing benchmark into a bank: one static version per group, with its verdicts.

`import_items` reads every row first (`read_groups`); a row with a problem (a key that is not one
of its options, no series, mixed types, a group spread over two categories) is reported with its
number and column (`RowProblem`) and nothing is stored. Then each group becomes a `static`
template version (its source: the group's items, `items.static`), with the provenance of the
file (name, format, sha256), an ``audit`` verdict (the static audit of
`verification.audit.static`, over the whole file so duplicates across groups are seen), a
``structure`` verdict (the rows validated; its first items, which the bank's diversity view
reads) and an accepting ``decision``: an imported benchmark is audited, not filtered; a reviewer
rejects a group on the review page. Importing the same file again stores nothing new (the
versions are keyed by the items' hash); a changed group becomes a new version of its key. With
``commit``, each group is committed as it is stored (an import job's progress), so an import that
stopped half way is finished by running it again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from itemsmith.items.schema import Decision, Provenance, RunStatus, StructureReport, Template
from itemsmith.items.static import static_source
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
from itemsmith.verification.audit.static import StaticAuditReport, StaticGroup, audit_static

__all__ = ["ImportReport", "ItemImportError", "RowProblem", "import_items", "read_groups"]

_SHOWN_ERRORS = 20
_STRUCTURE_ITEMS = 5


class RowProblem(BaseModel):
    """Why a row (or the whole file) cannot be imported."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    row: int | None = Field(description="the row's number (from 1 in a JSON array, the line in JSON lines); "
                                        "None: the file as a whole")
    field: str | None = Field(None, description="the row's column (columns joined by +) it is about")
    message: str

    def __str__(self) -> str:
        return self.message if self.row is None else f"row {self.row}: {self.message}"


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


def read_groups(source: str, fmt: ImportFormat, mapping: dict[str, list[str]]) -> tuple[int, list[list[ImportedRow]]]:
    """Every row of `source` by group, in file order (`ItemImportError` listing every bad row)."""
    errors: list[RowProblem] = []
    groups: dict[str, list[ImportedRow]] = {}
    count = 0
    try:
        for number, raw in read_rows(fmt, source):
            count += 1
            try:
                row = normalize(fmt, number, raw, mapping)
            except RowError as exc:
                errors.append(RowProblem(row=number, field=exc.field, message=str(exc)))
                continue
            first = groups.setdefault(row.group, [row])[0]
            if first is not row:
                if row.category != first.category:
                    errors.append(RowProblem(row=number, field=column(fmt, mapping, "category"), message=(
                        f"group {row.group!r} is in category {first.category!r} (row {first.row}) and "
                        f"{row.category!r} here; map 'group' to a finer column")))
                    continue
                groups[row.group].append(row)
    except (RowError, OSError, UnicodeDecodeError) as exc:
        raise ItemImportError.bad_rows(source, [RowProblem(row=None, message=str(exc))]) from None
    if not count:
        errors.append(RowProblem(row=None, message="the file holds no rows"))
    if errors:
        raise ItemImportError.bad_rows(source, errors)
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


def _template(rows: list[ImportedRow], provenance: Provenance) -> Template:
    first = rows[0]
    subcategory = first.item.metadata.get("subcategory")
    title = f"{first.category}: {subcategory}" if subcategory else f"{first.category}: {first.group}"
    concepts = list(dict.fromkeys(c for row in rows for c in row.concepts))
    return Template(id=first.group, source=static_source([row.item for row in rows]), title=title[:500],
                    category=first.category[:100], concepts=concepts, difficulty=first.difficulty,
                    provenance=provenance, kind="static")


def import_items(session: Session, bank: str, source: str, fmt: ImportFormat, *, owner: str, created_by: str,
                 mapping: dict[str, list[str]] | None = None, task: str = "", config: AuditConfig | None = None,
                 commit: bool = False, on_progress: Callable[[int, int], None] | None = None,
                 ) -> tuple[ImportReport, StaticAuditReport]:
    """Store `source`'s rows in `bank` (created when missing) as one static version per group, each
    with its audit and decision verdicts; nothing is stored when a row is bad (`ItemImportError`).
    `on_progress(groups done, groups)` is called once the file is audited and after each group
    (committed first, with `commit`)."""
    started = time.monotonic()
    rows, groups = read_groups(source, fmt, mapping or {})
    path = local_source(source, hf=fmt == "hf")[0]
    sha = _file_sha256(path)
    audit = audit_static([StaticGroup(g[0].group, g[0].category, [r.item for r in g]) for g in groups], config)
    name = path.name
    target = _bank(session, bank, owner, task or f"items imported from {name}")
    provenance = Provenance(origin="imported", generator=None, source_file=name, source_format=fmt, source_sha256=sha)
    new = unchanged = 0
    if on_progress is not None:
        on_progress(0, len(groups))
    for done, (group_rows, group_audit) in enumerate(zip(groups, audit.groups, strict=True), start=1):
        template = _template(group_rows, provenance)
        if find_version(session, target.id, template.content_hash) is not None:
            unchanged += 1
            add_template_version(session, target.id, template, created_by=created_by)  # same key, or a clear conflict
        else:
            version = add_template_version(session, target.id, template, created_by=created_by)
            new += 1
            # the rows' validation is this group's structure check: its first items, as a structure check keeps them
            record_verdict(session, version.id, StructureReport(
                status=RunStatus.ok, items=[r.item for r in group_rows[:_STRUCTURE_ITEMS]], deterministic=True,
                seeds=[0], num_samples=len(group_rows)))
            record_verdict(session, version.id, group_audit.report)
            reasons = [f"imported: {len(group_rows)} items of {name} ({fmt}, sha256 {sha[:12]})",
                       group_audit.report.summary()]
            record_verdict(session, version.id, Decision(accepted=True, stage="structure", reasons=reasons))
            if commit:
                session.commit()
        if on_progress is not None:
            on_progress(done, len(groups))
    return ImportReport(bank=target.name, source=name, format=fmt, sha256=sha, rows=rows, groups=len(groups),
                        new_versions=new, unchanged_versions=unchanged,
                        groups_failing_audit=[g.group for g in audit.groups if not g.report.passed],
                        elapsed_ms=(time.monotonic() - started) * 1000), audit
