"""Storing an authoring run's accepted templates in a bank from the command line (``itemsmith
author --bank``, ``itemsmith bank import-run``), exactly as the author job stores them.

`service.jobs.store_accepted`, the author job's own function, stores one accepted template as a
version of the bank with its verdicts (the structure report, every content stage's judge scores,
student answers and capability verdict, the decision), once per run id: storing again stores
nothing twice. `import_run` does it for a whole run (a `RunReport`, or the ``report.json`` of a run folder): each template's structure
check is run again in the sandbox with the run's handler, seed and sample count, as the job does
(a run with a fixed seed and sample count gets the items its content stages saw, so each student
answer is keyed by the hash of the item it answered); then the diversity of the stored
templates' items is measured (`templates_bank.diversity`) and, when the run had a student pool, the stored templates are calibrated
(`templates_bank.calibration`), or the report says why not (too few students).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.orm import Session

from itemsmith.agents.authoring.models import RunReport, SlotResult
from itemsmith.sandbox import SandboxLimits, SandboxPool
from itemsmith.service.jobs import store_accepted
from itemsmith.templates_bank.calibration import (
    CalibrationError,
    CalibrationReport,
    calibrate_versions,
    calibration_on_record,
)
from itemsmith.templates_bank.diversity import TemplateDiversity, stored_diversity
from itemsmith.templates_bank.handler_identity import HandlerMismatch, require_same_handler
from itemsmith.templates_bank.storage import get_bank
from itemsmith.verification.structure import check_structure

__all__ = ["ImportReport", "RunImportError", "StoredTemplate", "import_run", "load_run"]


class RunImportError(ValueError):
    """A run folder or report that cannot be imported."""


class StoredTemplate(BaseModel):
    slot: int
    version_id: int
    template_key: str
    content_hash: str
    title: str
    stored: bool = Field(description="False: this run's verdicts were on record already")


class ImportReport(BaseModel):
    """What an import stored and how calibration went."""

    run_id: str
    bank: str
    templates: list[StoredTemplate]
    diversity: TemplateDiversity | None = Field(None, description="of the stored templates' items")
    calibration: CalibrationReport | None = None
    calibration_skipped: str | None = Field(None, description="why the stored templates were not calibrated")


def load_run(run_dir: Path) -> RunReport:
    """The run report in ``run_dir/report.json`` (what ``itemsmith author`` writes)."""
    path = run_dir / "report.json"
    if not path.is_file():
        raise RunImportError(f"{run_dir}: no report.json (give the folder of one run: OUT/RUN_ID)")
    try:
        return RunReport.model_validate(json.loads(path.read_text()))
    except (ValueError, ValidationError) as exc:
        raise RunImportError(f"{path}: not a run report ({str(exc).splitlines()[0]})") from None


def import_run(session: Session, report: RunReport, bank: str, *, created_by: str, num_samples: int | None = None,
               seed: int | None = None, sandbox_workers: int = 1, calibrate: bool = True,
               limits: SandboxLimits | None = None) -> ImportReport:
    """Store every accepted template of the run in ``bank`` with its verdicts (`store_accepted`,
    the run id as run id), then calibrate them when the run had a student pool. The structure
    check runs with the run's sample count and seed as the author job does (``num_samples`` /
    ``seed`` stand in for a report that does not record them; None: drawn per check, like a run
    that drew them). `limits`: the sandbox's (None: the settings')."""
    num_samples = report.num_samples if report.num_samples is not None else num_samples
    seed = report.seed if report.seed is not None else seed
    bank_row = get_bank(session, bank)
    try:
        require_same_handler(bank_row.name, bank_row.handler, report.handler)
    except HandlerMismatch as exc:
        raise RunImportError(str(exc)) from None
    accepted: list[SlotResult] = [s for s in report.slots if s.template is not None and s.decision is not None
                                  and s.status == "accepted"]
    stored: list[StoredTemplate] = []
    with SandboxPool(report.handler, workers=sandbox_workers, limits=limits) as pool:
        for slot in accepted:
            assert slot.template is not None and slot.decision is not None
            structure = check_structure(slot.template.source, report.handler, num_samples=num_samples, seed=seed,
                                        pool=pool)
            results = slot.attempts[-1].verification if slot.attempts else []
            version, fresh = store_accepted(session, bank_row.id, slot.template, structure=structure, results=results,
                                            decision=slot.decision, run_id=report.run_id, created_by=created_by)
            stored.append(StoredTemplate(slot=slot.slot, version_id=version.id, template_key=version.template_key,
                                         content_hash=version.content_hash, title=version.title, stored=fresh))
    versions = {t.template_key: t.version_id for t in stored}
    out = ImportReport(run_id=report.run_id, bank=bank_row.name, templates=stored,
                       diversity=stored_diversity(session, versions) if versions else None)
    pooled = any(r.students is not None for s in accepted for a in s.attempts[-1:] for r in a.verification)
    if not calibrate or not pooled:
        return out.model_copy(update={"calibration_skipped": "the run had no student pool" if calibrate else None})
    calibration_id = f"{report.run_id}-irt"
    if calibration_on_record(session, calibration_id):
        return out.model_copy(update={"calibration_skipped": f"calibrated before ({calibration_id})"})
    try:
        calibration = calibrate_versions(session, versions, f"run {report.run_id}", calibration_id=calibration_id)
    except CalibrationError as exc:
        return out.model_copy(update={"calibration_skipped": str(exc)})
    return out.model_copy(update={"calibration": calibration})
