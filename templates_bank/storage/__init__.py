"""The template bank's storage: SQLAlchemy 2 models, Alembic migrations, typed functions.

A SQLite file by default (``ITEMSMITH_DATABASE_URL`` or ``ITEMSMITH_DATA_DIR``, see
`templates_bank.settings`); PostgreSQL when configured (``postgresql://...``, extra
``postgres``). Every function takes a session (`open_session`) and returns pydantic models.

Tables (created by ``upgrade()`` / ``itemsmith db upgrade``):

- ``banks``: one per dataset (handler) and task.
- ``template_versions``: immutable, keyed by the sha256 of the source within a bank; the stable
  template id is ``template_key``; ``parent_version_id`` links a version to the one it revises.
- ``verdicts``: every typed verdict (structure, judge, capability, irt, decision) as JSON, with
  ``(stage, model, prompt_hash, item_hash)`` as the key of the judge-answer cache.
- ``student_responses``: every student answer; ``(model, prompt_hash, item_hash)`` is the key of
  the student-answer cache.
- ``review_decisions``: approve/reject, who, when, why.
- ``template_summaries``: per version, what the review listing filters and shows (status,
  decision stage, latest judge panel's mean score, IRT), refreshed on every verdict and review
  write in the same transaction (`storage._summaries`).
- ``evaluation_responses``: every evaluated model's answer to every item (calibration reads them;
  a failed evaluation resumes from them).
- ``releases`` and ``release_templates``: frozen bank states (see `templates_bank.releases`).
- ``items`` and ``release_items``: every release's items, stored once and content-addressed
  (sha256 of the item's JSON), in the release's order; ``item_plots``: plots drawn for exports,
  cached by item hash (`storage._items`); ``item_runs``: the items of each (template, seed) run by
  the run's key, which `release create` reuses (`templates_bank.item_runs`).

Versions, verdicts, responses, reviews, releases and their items are append-only: the session and database
triggers refuse updates and deletes.

The ORM rows and `Base` are public for the layers above (bank operations, the service's use
cases), which query them in their own sessions; the service's own tables (``api_keys``,
``jobs``, ``job_events``) are declared on the same `Base` in `itemsmith.service.tables`, and
created by the same migration chain (revision 0002).
"""

from itemsmith.templates_bank.storage._banks import (
    add_template_version,
    create_bank,
    find_version,
    get_bank,
    get_bank_by_id,
    get_version,
    list_banks,
    list_versions,
)
from itemsmith.templates_bank.storage._curated import import_curated
from itemsmith.templates_bank.storage._engine import (
    VERSION_TABLE,
    current_revision,
    downgrade,
    get_engine,
    head_revision,
    is_known_revision,
    normalize_url,
    open_session,
    require_current_schema,
    upgrade,
)
from itemsmith.templates_bank.storage._errors import BankExistsError, NotFoundError, StorageError, VersionConflictError
from itemsmith.templates_bank.storage._evaluations import (
    EvaluationResponseCreate,
    EvaluationResponsePublic,
    EvaluationResponseRow,
    cached_evaluation_response,
    list_evaluation_responses,
    record_evaluation_response,
)
from itemsmith.templates_bank.storage._items import (
    ItemPlotRow,
    ItemRow,
    ItemRunRow,
    ReleaseItemRow,
    StoredItem,
    cached_plot,
    has_stored_items,
    read_item_runs,
    read_release_items,
    store_item_runs,
    store_plot,
    store_release_items,
)
from itemsmith.templates_bank.storage._models import (
    APPEND_ONLY_TABLES,
    BankRow,
    BankSession,
    Base,
    ImmutableRecordError,
    ReleaseRow,
    ReleaseTemplateRow,
    ReviewDecisionRow,
    StudentResponseRow,
    TemplateSummaryCountRow,
    TemplateSummaryRow,
    TemplateVersionRow,
    VerdictRow,
)
from itemsmith.templates_bank.storage._schemas import (
    NAME_PATTERN,
    BankCreate,
    BankPublic,
    ReviewCreate,
    ReviewPublic,
    Stage,
    StudentResponsePublic,
    TemplateVersionPublic,
    VerdictPublic,
    VerdictRecord,
)
from itemsmith.templates_bank.storage._summaries import judge_panels, refresh_summary
from itemsmith.templates_bank.storage._types import JSONType, UTCDateTime, utcnow
from itemsmith.templates_bank.storage._verdicts import (
    VersionStatus,
    cached_student_response,
    cached_verdict,
    list_reviews,
    list_student_responses,
    list_verdicts,
    record_review,
    record_student_response,
    record_verdict,
    releasable_versions,
    version_statuses,
)

__all__ = [
    "ItemPlotRow", "ItemRow", "ItemRunRow", "ReleaseItemRow", "StoredItem", "cached_plot", "has_stored_items",
    "read_item_runs", "read_release_items", "store_item_runs", "store_plot", "store_release_items",
    "EvaluationResponseCreate", "EvaluationResponsePublic", "EvaluationResponseRow", "cached_evaluation_response",
    "list_evaluation_responses",
    "record_evaluation_response",
    "APPEND_ONLY_TABLES", "Base", "NAME_PATTERN", "BankRow", "BankSession", "JSONType", "ReleaseRow", "ReleaseTemplateRow", "ReviewDecisionRow",
    "StudentResponseRow", "TemplateSummaryCountRow", "TemplateSummaryRow", "TemplateVersionRow", "judge_panels", "refresh_summary", "UTCDateTime", "VERSION_TABLE", "VerdictRow", "utcnow",
    "BankCreate", "BankExistsError", "BankPublic", "ImmutableRecordError", "NotFoundError", "ReviewCreate",
    "ReviewPublic", "Stage", "StorageError", "StudentResponsePublic", "TemplateVersionPublic", "VerdictPublic",
    "VerdictRecord", "VersionConflictError", "VersionStatus", "add_template_version", "cached_student_response",
    "cached_verdict", "create_bank", "current_revision", "downgrade", "find_version", "get_bank", "get_bank_by_id", "get_engine",
    "get_version", "head_revision", "import_curated", "is_known_revision", "list_banks", "list_reviews", "list_student_responses",
    "list_verdicts",
    "list_versions", "normalize_url", "open_session", "record_review", "record_student_response", "record_verdict",
    "releasable_versions", "require_current_schema", "upgrade", "version_statuses",
]
