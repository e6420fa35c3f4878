"""Pydantic models at the jobs' boundaries: what a job is, its events, each kind's request."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.agents.config import AuthoringRequest, JudgeSpecs, StudentSpecs
from itemsmith.agents.llm.spec import ModelSpecField, StudentSpec
from itemsmith.items.rendering import TextFormat
from itemsmith.service.items_upload import UploadFormat
from itemsmith.templates_bank.adaptive import AdaptiveConfig

__all__ = [
    "FINAL_STATUSES", "AuditJobRequest", "AuthorJobRequest", "CalibrateJobRequest", "EvaluateJobRequest",
    "ExportJobRequest", "ImportJobRequest", "ReleaseJobRequest", "JobEventPublic", "JobKind", "JobPublic", "JobStatus",
    "RecheckJobRequest", "ReverifyJobRequest", "VerificationSpecs", "VerifyJobRequest",
]

JobKind = Literal["author", "reverify", "evaluate", "recheck", "calibrate", "release", "export", "verify", "import",
                  "audit"]
JobStatus = Literal["queued", "running", "succeeded", "failed", "cancelled"]
FINAL_STATUSES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})


class JobPublic(BaseModel):
    """A job as the API shows it. ``progress`` is the kind's live summary (for an authoring job:
    templates queued, in flight, accepted, rejected by stage, tokens, cost)."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    kind: JobKind
    status: JobStatus
    bank_id: int | None
    progress: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    attempts: int = Field(description="how many times a worker claimed the job (more than 1: it was resumed)")
    cancel_requested: bool
    created_at: datetime
    updated_at: datetime


class JobEventPublic(BaseModel):
    """One progress event; ``seq`` counts from 1 within the job (the server-sent event's id)."""

    model_config = ConfigDict(from_attributes=True)

    seq: int
    kind: str
    payload: dict[str, Any]
    created_at: datetime


class VerificationSpecs(BaseModel):
    """The content stages after the item audit: unset, the server's defaults (those installed);
    an empty list, none."""

    model_config = ConfigDict(extra="forbid")

    judges: JudgeSpecs = None
    students: StudentSpecs = None


class AuthorJobRequest(AuthoringRequest):
    """Author templates for a bank: plan, generate, check in the sandbox, verify, refine; every
    accepted template is stored in the bank with its verdicts."""

    bank_id: int


class RecheckJobRequest(VerificationSpecs):
    """Check a stored template version again (an edited version): structure check in the sandbox,
    then the configured content stages; the verdicts and the decision are stored on it."""

    version_id: int
    num_samples: int | None = Field(None, ge=1, le=100, description="default: drawn per check")
    seed: int | None = Field(None, ge=0, description="default: drawn per check")


class ReverifyJobRequest(BaseModel):
    """Judge a release of the bank again with a new panel (and optionally a new student pool);
    the new verdicts are stored beside the old ones and the difference is the job's result."""

    model_config = ConfigDict(extra="forbid")

    bank: str = Field(min_length=1, max_length=100, description="the bank's name")
    release: int = Field(ge=1, description="the release's number")
    judges: list[ModelSpecField] = Field(min_length=1, max_length=10, description="judge model specs of the new panel")
    students: list[StudentSpec] = Field(default_factory=list, max_length=10, description="students as SPEC@RANK")


class ReleaseJobRequest(BaseModel):
    """Freeze the bank's releasable templates (or the named ones) into its next release: every
    item is generated once in the sandbox and stored with the release."""

    model_config = ConfigDict(extra="forbid")

    bank_id: int
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1, max_length=1000)
    num_samples: int = Field(5, ge=1, le=1000)
    template_ids: list[str] | None = Field(None, min_length=1, max_length=10_000)
    note: str = Field("", max_length=10_000)
    created_by: str = Field(min_length=1, max_length=200)


class ExportJobRequest(BaseModel):
    """Write a release in an export format and zip it (downloaded from the finished job)."""

    model_config = ConfigDict(extra="forbid")

    release_id: int
    format: str = Field(min_length=1, max_length=30)
    text_format: TextFormat = TextFormat.plain
    decimals: int = Field(2, ge=0, le=10)
    plots: bool = False


class VerifyJobRequest(BaseModel):
    """Run a release's templates again and compare their items, byte for byte, with the stored ones
    (`templates_bank.reproducibility`)."""

    model_config = ConfigDict(extra="forbid")

    bank: str = Field(min_length=1, max_length=100, description="the bank's name")
    release: int = Field(ge=1, description="the release's number")


class EvaluateJobRequest(BaseModel):
    """Evaluate one model on a release of the bank (or on fresh instances of its templates)."""

    model_config = ConfigDict(extra="forbid")

    bank: str = Field(min_length=1, max_length=100, description="the bank's name")
    release: int = Field(ge=1, description="the release's number")
    model: ModelSpecField = Field(description="model spec of the model under test")
    formats: list[TextFormat] = Field(default_factory=lambda: [TextFormat.plain], min_length=1, max_length=9,
                                      description="text formats of the series; each item is answered in each")
    fresh_seed: int | None = Field(None, ge=0, description="evaluate on new instances drawn from this seed")
    concurrency: int = Field(4, ge=1, le=64, description="model calls in flight")
    adaptive: AdaptiveConfig | None = Field(None, description="evaluate adaptively with this configuration (its seed "
                                                              "fixed, so a job claimed again resumes): in formats[0]")


class CalibrateJobRequest(BaseModel):
    """Calibrate a release of the bank on every answer stored for its templates."""

    model_config = ConfigDict(extra="forbid")

    bank: str = Field(min_length=1, max_length=100, description="the bank's name")
    release: int = Field(ge=1, description="the release's number")
    priors: bool = Field(False, description="fit even with fewer respondents than min_respondents")
    min_respondents: int = Field(5, ge=2, le=1000, description="distinct respondents a fit needs")


class ImportJobRequest(BaseModel):
    """Store the items of a benchmark file uploaded for the bank (`service.items_upload`)."""

    model_config = ConfigDict(extra="forbid")

    bank_id: int
    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="the uploaded file's content hash")
    file_name: str = Field(pattern=r"^[A-Za-z0-9-][A-Za-z0-9._-]{0,99}$", description="as it was uploaded")
    format: UploadFormat
    mapping: dict[str, list[str]] = Field(default_factory=dict, description="field -> the file's columns")
    created_by: str = Field(min_length=1, max_length=200)
    audit: bool = Field(True, description="False: store the items without the static audit (audit the release later)")


class AuditJobRequest(BaseModel):
    """Audit a release of the bank's items as a fixed set, per group and per category."""

    model_config = ConfigDict(extra="forbid")

    bank: str = Field(min_length=1, max_length=100, description="the bank's name")
    release: int = Field(ge=1, description="the release's number")
