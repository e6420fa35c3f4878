"""`itemsmith release verify`: does the release still reproduce? Every template of the release is
run again in the sandbox on the release's seeds and its items are compared, byte for byte, with
the items the release stored (and their hash with the manifest's).

What differs is said per template and (template, seed) run: a run that failed, a different number
of items, or the first differing items with the fields that differ (``options``, ``series``, ...,
or only the order of a field's keys, which exports keep). Static templates (imported items) are read from their stored source
and compared the same way.

A release made before items were stored has no bytes to compare: its regenerated items are
checked against the manifest's hashes, and when every template matches they are stored, so from
then on the release is read from storage like any other (``stored_now`` counts them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby
from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from itemsmith.sandbox import SandboxLimits
from itemsmith.templates_bank.regeneration import RunItems, items_digest, regenerate
from itemsmith.templates_bank.releases import (
    ItemSpool,
    Release,
    ReleaseRun,
    ReleaseTemplate,
    StoredItems,
    item_body,
    store_items,
)
from itemsmith.templates_bank.storage import read_release_items

__all__ = ["ReproductionReport", "TemplateReproduction", "reproduction_table", "verify_release"]

SHOWN = 3  # differing items described per template


class TemplateReproduction(BaseModel):
    template_id: str
    reproduced: bool
    items: int = Field(description="items regenerated")
    differences: list[str] = Field(default_factory=list, description="what differs, run by run (the first few)")


class ReproductionReport(BaseModel):
    release: str
    checksum: str
    compared_with: Literal["stored items", "manifest hashes"] = Field(
        description="stored items: byte for byte; manifest hashes: a release made before items were stored")
    reproduced: bool
    items: int
    stored_now: int = Field(0, description="items this verification stored (a release made before items were stored)")
    templates: list[TemplateReproduction]

    @property
    def differing(self) -> list[TemplateReproduction]:
        return [t for t in self.templates if not t.reproduced]


class _StoredRuns:
    """The release's stored item JSON run by run, taken in step with the regenerated runs."""

    def __init__(self, stored: StoredItems) -> None:
        rows = read_release_items(stored.engine, stored.release_id)
        self._runs = ((key, [row.body for row in group])
                      for key, group in groupby(rows, key=lambda r: (r.template_position, r.seed)))
        self.next = next(self._runs, None)

    def take(self, position: int, seed: int) -> list[str]:
        """The stored items of that run (none stored: an empty list)."""
        if self.next is None or self.next[0] != (position, seed):
            return []
        bodies = self.next[1]
        self.next = next(self._runs, None)
        return bodies


def _fields_differing(stored: str, regenerated: str) -> str:
    """The item fields whose values differ; a field that differs only in the order of its keys is
    marked so (exports write that order)."""
    old, new = json.loads(stored), json.loads(regenerated)
    fields = []
    for key in dict.fromkeys([*old, *new]):
        if old.get(key) != new.get(key):
            fields.append(key)
        elif json.dumps(old.get(key)) != json.dumps(new.get(key)):
            fields.append(f"{key} (the order of keys)")
    return ", ".join(fields) or "the order of the fields"


def _run_differences(seed: int, stored: list[str], regenerated: list[str]) -> list[str]:
    out = []
    if len(stored) != len(regenerated):
        out.append(f"seed {seed}: {len(regenerated)} items, the release stored {len(stored)}")
    for index, (old, new) in enumerate(zip(stored, regenerated, strict=False)):
        if old != new:
            out.append(f"seed {seed} item {index} differs in {_fields_differing(old, new)}")
    return out


def _template(entry: ReleaseTemplate, position: int, runs: Iterable[RunItems], stored: _StoredRuns | None,
              spool: ItemSpool) -> TemplateReproduction:
    """One template's regenerated runs against its stored items (or, none stored, its manifest
    hash; the items go to `spool` meanwhile)."""
    digest, count, differences = hashlib.sha256(), 0, []
    for run in runs:
        stored_bodies = stored.take(position, run.seed) if stored is not None else []
        if run.error is not None:
            differences.append(f"seed {run.seed}: the run failed: {run.error}")
            continue
        items_digest(digest, run.items)
        count += len(run.items)
        if stored is not None:
            differences += _run_differences(run.seed, stored_bodies, [item_body(item) for item in run.items])
        else:
            spool.add(position, ReleaseRun(run.seed, run.items))
    if not differences and (digest.hexdigest() != entry.items_sha256 or count != entry.items):
        differences.append(f"{count} items with sha256 {digest.hexdigest()[:12]}, the manifest recorded "
                           f"{entry.items} with {entry.items_sha256[:12]}")
    shown = differences[:SHOWN] + ([f"and {len(differences) - SHOWN} more"] if len(differences) > SHOWN else [])
    return TemplateReproduction(template_id=entry.template_id, reproduced=not differences, items=count,
                                differences=shown)


def _counted(runs: Iterable[RunItems], total: int,
             on_progress: Callable[[int, int], None] | None) -> Iterator[RunItems]:
    for done, run in enumerate(runs, start=1):
        if on_progress is not None:
            on_progress(done, total)
        yield run


def verify_release(session: Session, release: Release, *, workers: int = 1, limits: SandboxLimits | None = None,
                   on_progress: Callable[[int, int], None] | None = None) -> ReproductionReport:
    """Regenerate the release and compare (see the module); ``on_progress(done, total)`` follows
    the (template, seed) runs. The session is written to only to store a release's items that were
    not stored (when they reproduce the manifest's hashes)."""
    manifest = release.manifest
    stored = _StoredRuns(release.stored) if release.stored is not None else None
    position = {t.template_id: i for i, t in enumerate(manifest.templates)}
    runs = release.runs()
    regenerated = _counted(regenerate(runs, workers=workers, limits=limits, keep_going=True),
                           sum(len(run.seeds) for run in runs), on_progress)
    with ItemSpool() as spool:
        templates = [_template(manifest.templates[position[template_id]], position[template_id], runs, stored, spool)
                     for template_id, runs in groupby(regenerated, key=lambda r: r.run.template_id)]
        if stored is not None and stored.next is not None:
            (left, seed), _ = stored.next
            templates.append(TemplateReproduction(template_id=manifest.templates[left].template_id, reproduced=False,
                                                  items=0, differences=[f"seed {seed}: stored items no run gave"]))
        reproduced = all(t.reproduced for t in templates)
        stored_now = 0
        if stored is None and reproduced:
            assert release.release_id is not None, "a release read from a bank"
            store_items(session, release.release_id, spool)
            stored_now = manifest.counts.items
    return ReproductionReport(release=manifest.ref, checksum=manifest.checksum,
                              compared_with="manifest hashes" if stored is None else "stored items",
                              reproduced=reproduced, items=sum(t.items for t in templates), stored_now=stored_now,
                              templates=templates)


def reproduction_table(report: ReproductionReport) -> str:
    """The report as text: the verdict, then each template that differs and how."""
    if report.reproduced:
        how = "byte for byte as stored" if report.compared_with == "stored items" else "the manifest's hashes"
        lines = [f"{report.release} reproduces: {report.items} items in {len(report.templates)} templates, "
                 f"{how}"]
        if report.stored_now:
            lines.append(f"stored its {report.stored_now} items (the release was made before items were stored): "
                         "it is now read from storage")
        return "\n".join(lines)
    lines = [f"{report.release} does NOT reproduce: {len(report.differing)} of {len(report.templates)} templates "
             f"differ from the {report.compared_with}"]
    for t in report.differing:
        lines.append(f"{t.template_id}:")
        lines += [f"    {d}" for d in t.differences]
    return "\n".join(lines)
