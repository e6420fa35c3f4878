"""The ``import`` and ``audit`` jobs of an existing benchmark: storing an uploaded file's items as
static groups (`templates_bank.static_items.import_items`; about 11 s for 766 items, most of it
the static audit and one version per group) and the static audit of a release's items as a fixed
set (`audit_release`, on the items the release stored).

An import's progress events count the rows read and the groups stored (``rows_parsed``,
``groups``, ``groups_stored``, about every second), each committing the groups stored before it
(one commit a group cost more than the storing on SQLite); it stops at the next group (or
thousand rows) when cancelled, and run again (resumed, or claimed again after a crash) it stores
only the groups not stored yet (versions are keyed by their items' hash). The upload's rows were
read when it arrived (`service.items_upload`), so a bad row never reaches a job."""

from __future__ import annotations

import time
from typing import Any

from itemsmith.service.access import owned_bank
from itemsmith.service.items_upload import items_file
from itemsmith.service.jobs._context import JobContext
from itemsmith.service.jobs._schemas import AuditJobRequest, ImportJobRequest
from itemsmith.templates_bank.releases import get_release
from itemsmith.templates_bank.static_items import ImportProgress, audit_release, import_items
from itemsmith.templates_bank.storage import BankSession, NotFoundError, open_session

__all__ = ["run_audit_job", "run_import_job"]

# a progress event at least this often while the rows are read and the groups stored; each one
# also notes a cancel, which takes effect at the next group (or the next thousand rows)
_PROGRESS_EVERY_S = 1.0


def run_import_job(request: ImportJobRequest, context: JobContext) -> dict[str, Any]:
    with open_session(context.engine) as session:
        bank = owned_bank(session, request.bank_id, context.owner)
    path = items_file(context.settings.uploads_dir, context.owner, bank.name, request.sha256, request.file_name)
    if not path.is_file():
        raise NotFoundError(f"the uploaded file {request.file_name} is gone; upload it again")

    last: list[float] = []
    with BankSession(context.engine, expire_on_commit=False) as session:

        def progress(state: ImportProgress) -> None:
            """Commit what is stored and report it when a phase starts or ends and at most every
            `_PROGRESS_EVERY_S` between (publishing notes a cancel); then stop here if the job was
            cancelled (the groups stored since the last report are stored again on resume)."""
            now = time.monotonic()
            edge = state.phase == "stored" or (state.phase == "storing" and state.groups_stored == 1)
            if edge or not last or now - last[-1] >= _PROGRESS_EVERY_S:
                session.commit()
                counts = state.model_dump(exclude={"phase"})
                context.publish("progress", {"phase": state.phase, **counts}, progress=counts)
                last.append(now)
            context.raise_if_interrupted()

        report, _ = import_items(session, bank.name, str(path), request.format, owner=context.owner,
                                 created_by=request.created_by, mapping=request.mapping, audit=request.audit,
                                 on_progress=progress)
        session.commit()
    return report.model_dump(mode="json")


def run_audit_job(request: AuditJobRequest, context: JobContext) -> dict[str, Any]:
    with open_session(context.engine) as session:
        release = get_release(session, request.bank, request.release, context.owner, bank_id=context.bank_id)
    return audit_release(release).model_dump(mode="json")
