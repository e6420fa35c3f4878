"""Request and response models of the REST API, one family per resource (``XCreate``, ``XPublic``).

Requests name models by spec only (``openai:gpt-4o``): provider keys come from the server's
environment and never travel in a request or a response. Handlers appear by name and content
hash (`HandlerRef`), never by where their files are on the server (`BankView`,
`TemplateVersionView`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Form, Path
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from itemsmith.agents.config import RunSettings
from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.providers import check_spec, spec_pattern
from itemsmith.agents.llm.spec import AsText, ModelSpec, ModelSpecField, StudentSpec
from itemsmith.items.rendering import TextFormat
from itemsmith.items.schema import IRTParameters, Item
from itemsmith.service.jobs import JobPublic
from itemsmith.service.review import DecisionStage, TemplatePage, TemplateSummary
from itemsmith.service.settings import request_policy
from itemsmith.templates_bank.handler_identity import HandlerRef, handler_ref
from itemsmith.templates_bank.releases import ReleaseManifest
from itemsmith.templates_bank.storage import (
    NAME_PATTERN,
    BankPublic,
    ReviewPublic,
    StudentResponsePublic,
    TemplateVersionPublic,
    VerdictPublic,
    VersionStatus,
)

__all__ = [
    "CalibrationCreate", "ImportProblem", "ImportRejected",
    "BankCreated", "BankNameForm", "BankView", "TemplateVersionView", "BankRunSettings", "DecisionStage", "EvaluationCreate", "AllowedSpec", "RecordId",
    "ReleaseCreateRequest", "ReleasePublic", "ReverifyCreate", "ReviewRequest", "AllowedStudent", "TemplateDetail",
    "TemplateEdit", "TemplateEdited", "TemplatePage", "TemplateSummary", "check_model_spec", "check_student",
    "validation_message",
]

RecordId = Annotated[int, Path(ge=1, le=2**31 - 1, description="a record's id")]
BankNameForm = Annotated[str, Form(min_length=1, max_length=100, pattern=NAME_PATTERN,
                                   description="bank name: lowercase letters, digits, '.', '_', '-'")]


def check_model_spec(spec: ModelSpec) -> ModelSpec:
    """A model spec a request may name (`service.settings.request_policy`): an enabled provider, an
    OpenAI-compatible server by its configured endpoint name (never a URL), a known local model, a
    script inside the scripts folder."""
    try:
        return check_spec(spec, request_policy())
    except ProviderConfigError as exc:
        raise ValueError(str(exc)) from None


def check_student(student: StudentSpec) -> StudentSpec:
    """A student (``SPEC@RANK``, larger rank: more capable) of a rank from 0 to 1000 whose spec a
    request may name."""
    if not 0 <= student.rank <= 1000:
        raise ValueError(f"student {str(student)!r} is not SPEC@RANK with a rank from 0 to 1000 "
                         "(e.g. openai:gpt-4o-mini@1)")
    check_model_spec(student.spec)
    return student


def _allowed_student(value: object) -> StudentSpec:
    return check_student(StudentSpec.model_validate(value))


def _spec_text() -> str:
    """The texts of the model specs this server lets a request name (`agents.llm.providers.spec_pattern`)."""
    return spec_pattern(request_policy())


def _student_text() -> str:
    """``SPEC@RANK`` with a spec of `_spec_text` and a rank from 0 to 1000."""
    return _spec_text().removesuffix("$") + "@(?:[0-9]|[1-9][0-9]{1,2}|1000)$"


@dataclass(frozen=True, eq=False)  # hashed as itself: typing hashes the metadata of an Annotated
class TextMatching:
    """Pydantic metadata, last of an ``Annotated``: a value given as text must also match `pattern()`
    (read when a request is checked and when the API description is made, so both say the same),
    and the description carries the pattern. So a spec the description allows is one this server
    accepts (but for a script file that does not exist), and one it does not allow is refused (with
    the reason of the checks before, when they have one)."""

    pattern: Callable[[], str]
    what: str

    def _check(self, value: Any, checked: core_schema.ValidatorFunctionWrapHandler) -> Any:
        result = checked(value)
        if isinstance(value, str) and not re.fullmatch(self.pattern(), value):
            raise PydanticCustomError("model_spec", "'{value}' is not a {what} this server accepts (see the pattern "
                                      "in the API description)", {"value": value[:100], "what": self.what})
        return result

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_wrap_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "pattern": self.pattern()}


AllowedSpec = Annotated[ModelSpecField, AfterValidator(check_model_spec), TextMatching(_spec_text, "model spec")]
AllowedStudent = Annotated[StudentSpec, AsText(_allowed_student, {
    "type": "string", "minLength": 5, "maxLength": 500, "description": "SPEC@RANK, larger rank: more capable"}),
    TextMatching(_student_text, "student (SPEC@RANK)")]
Panel = Annotated[list[AllowedSpec], Field(max_length=10, description="judge model specs")]
StudentPool = Annotated[list[AllowedStudent], Field(max_length=10, description="students as SPEC@RANK")]


def validation_message(exc: ValidationError) -> str:
    """The errors of a model as one line, without echoing the input (it may hold a secret)."""
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in exc.errors())


class BankRunSettings(RunSettings):
    """Run settings of a bank's authoring job (the ``settings`` JSON field of ``POST /banks``): the
    authoring request's `RunSettings`, with every model spec checked against what this server allows."""

    generator: AllowedSpec | None = Field(None, description="default: the server's default generator")
    planner: AllowedSpec | None = Field(None, description="default: the generator")
    judges: Panel | None = Field(None, description="default: the server's default panel (those installed); []: none")

    @field_validator("students")
    @classmethod
    def _allowed_students(cls, students: list[StudentSpec] | None) -> list[StudentSpec] | None:
        for student in students or []:
            check_model_spec(student.spec)
        return students


class BankView(BankPublic):
    """A bank as the API shows it: its handler by name and content hash."""

    handler: HandlerRef  # type: ignore[assignment]

    @classmethod
    def of(cls, bank: BankPublic) -> BankView:
        return cls(**bank.model_dump(exclude={"handler"}), handler=handler_ref(bank.handler))


class TemplateVersionView(TemplateVersionPublic):
    """A template version as the API shows it: its own handler (if any) by name and content hash."""

    handler: HandlerRef | None  # type: ignore[assignment]

    @classmethod
    def of(cls, version: TemplateVersionPublic) -> TemplateVersionView:
        return cls(**version.model_dump(exclude={"handler"}),
                   handler=None if version.handler is None else handler_ref(version.handler))


class BankCreated(BaseModel):
    """A new bank and the job filling it: authoring, or importing an existing benchmark's items."""

    bank: BankView
    job: JobPublic


class TemplateDetail(BaseModel):
    """A template version with everything said about it and a few items regenerated in the sandbox."""

    version: TemplateVersionView
    status: VersionStatus
    verdicts: list[VerdictPublic]
    responses: list[StudentResponsePublic] = Field(description="every student answer to its items")
    reviews: list[ReviewPublic]
    irt: IRTParameters | None
    samples: list[Item]
    samples_seed: int
    samples_error: str | None = Field(description="why no sample items could be regenerated")


class ReviewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["approve", "reject"]
    note: str = Field("", max_length=10_000)


class TemplateEdit(BaseModel):
    """A reviewer's revision of a template's source: a new version, verified again. The panel
    defaults to the one of the bank's latest authoring job."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, max_length=256 * 1024)
    title: str | None = Field(None, min_length=1, max_length=500, description="default: the parent's title")
    judges: Panel | None = None
    students: StudentPool | None = None


class TemplateEdited(BaseModel):
    version: TemplateVersionView
    job: JobPublic


class ReleaseCreateRequest(BaseModel):
    """What to freeze: every releasable template (or the named ones) on every seed."""

    model_config = ConfigDict(extra="forbid")

    seeds: list[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(default_factory=lambda: [0], min_length=1,
                                                                   max_length=1000, json_schema_extra={"uniqueItems": True})
    num_samples: int = Field(5, ge=1, le=1000)
    template_ids: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None, min_length=1, max_length=10_000, description="default: every releasable template")
    note: str = Field("", max_length=10_000)


class ReleasePublic(BaseModel):
    id: int
    bank_id: int
    number: int
    ref: str = Field(description="bank@number")
    checksum: str
    created_at: datetime
    manifest: ReleaseManifest


class ReverifyCreate(BaseModel):
    """Judge a release again with a new panel (and optionally a new student pool)."""

    model_config = ConfigDict(extra="forbid")

    judges: Panel = Field(min_length=1)
    students: StudentPool = Field(default_factory=list)


class EvaluationCreate(BaseModel):
    """Answer every item of a release with one model, or (``adaptive``) a few informative fresh
    instances until the ability's SE reaches ``target_se`` or ``max_items`` were asked."""

    # `_adaptive_options` in the description: adaptive with one format, or neither budget
    model_config = ConfigDict(extra="forbid", json_schema_extra={
        "if": {"required": ["adaptive"], "properties": {"adaptive": {"const": True}}},
        "then": {"properties": {"formats": {"maxItems": 1}}},
        "else": {"properties": {"max_items": {"type": "null"}, "target_se": {"type": "null"}}}})

    model: AllowedSpec
    formats: list[TextFormat] = Field(default_factory=lambda: [TextFormat.plain], min_length=1, max_length=9)
    fresh_seed: int | None = Field(None, ge=0, le=2**31 - 1, description="evaluate on new instances drawn from this "
                                   "seed (a contamination check); with adaptive, the seed of its fresh instances and "
                                   "picks (default: drawn, recorded in the result)")
    adaptive: bool = Field(False, description="adaptive evaluation on the release's calibration (docs/calibration.md)")
    max_items: int | None = Field(None, ge=1, le=10_000, description="with adaptive: the item budget (default 50)")
    target_se: float | None = Field(None, ge=0.01, le=5.0, description="with adaptive: stop at this ability SE "
                                                                       "(default 0.3)")

    @model_validator(mode="after")
    def _adaptive_options(self) -> EvaluationCreate:
        if not self.adaptive and (self.max_items is not None or self.target_se is not None):
            raise ValueError("max_items and target_se apply only with adaptive: true")
        if self.adaptive and len(self.formats) > 1:
            raise ValueError("an adaptive evaluation asks in one text format; give one in formats")
        return self


class CalibrationCreate(BaseModel):
    """Calibrate a release's templates on every answer stored for them (student pools, evaluations)."""

    model_config = ConfigDict(extra="forbid")

    priors: bool = Field(False, description="fit even with fewer respondents than min_respondents (mostly prior)")
    min_respondents: int = Field(5, ge=2, le=1000, description="distinct respondents a fit needs")


class ImportProblem(BaseModel):
    """Why an uploaded benchmark file was refused, in FastAPI's error shape (``type``, ``loc``,
    ``msg``) with the row and its column: ``bad_row`` (``loc``: body, file, row, column),
    ``bad_file`` (not JSON, no rows), ``bad_map`` (the ``map`` field); FastAPI's own errors (a
    missing field) and ``string_nul`` carry no row."""

    type: str
    loc: list[str | int]
    msg: str
    row: int | None = Field(None, description="the row's number (from 1 in a JSON array, the line in JSON lines)")
    field: str | None = Field(None, description="the row's column it is about")


class ImportRejected(BaseModel):
    """An upload refused with nothing stored: every problem found, each bad row once."""

    detail: list[ImportProblem]
