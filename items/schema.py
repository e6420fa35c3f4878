"""The item and template schema, and the verdict records every stage writes.

Items cross the sandbox boundary as plain JSON and are validated here, on the
host, with messages a template author (person or LLM) can act on.
"""

from __future__ import annotations

import hashlib
import math
import re
from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

MIN_OPTIONS = 2
MAX_OPTIONS = 6
# Caps on what one item may hold: everything derived from it (plots, prompts, the review
# page) stays bounded, whoever made it.
MAX_CHANNELS = 16
MAX_POINTS_PER_SERIES = 20_000
MAX_POINTS_PER_ITEM = 100_000
MAX_LABEL_CHARS = 120  # series name and unit: plot titles and axis labels
MAX_TIMESTAMP_CHARS = 40
MAX_QUESTION_CHARS = 4000
MAX_OPTION_CHARS = 500
MAX_CONTEXT_CHARS = 8000  # context and rationale

# Characters no text field may hold: C0 controls except tab, newline and carriage return,
# DEL, C1 controls (ESC and CSI start terminal escape sequences) and lone surrogates (not
# encodable as UTF-8). `CONTROL_CHARACTERS.search(text)` is the one check.
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(text: str) -> str:
    """Refuse control characters and lone surrogates in a text field (see CONTROL_CHARACTERS)."""
    found = CONTROL_CHARACTERS.search(text)
    if found is not None:
        raise ValueError(f"text contains the control character or lone surrogate U+{ord(found.group()):04X} "
                         f"at position {found.start()}; remove it")
    return text


# Texts capped in length and checked for control characters (type aliases, so a type checker sees str).
LabelText = Annotated[str, Field(max_length=MAX_LABEL_CHARS), AfterValidator(check_text)]
TimestampText = Annotated[str, Field(max_length=MAX_TIMESTAMP_CHARS), AfterValidator(check_text)]
QuestionText = Annotated[str, Field(max_length=MAX_QUESTION_CHARS), AfterValidator(check_text)]
OptionText = Annotated[str, Field(max_length=MAX_OPTION_CHARS), AfterValidator(check_text)]
ContextText = Annotated[str, Field(max_length=MAX_CONTEXT_CHARS), AfterValidator(check_text)]


class ItemKind(str, Enum):
    """`mc` multiple choice, `tf` true/false, `pz` puzzle (order shuffled segments)."""

    mc = "mc"
    tf = "tf"
    pz = "pz"


class Series(BaseModel):
    """One named channel of an item: finite values, optional timestamps, a unit."""

    model_config = ConfigDict(extra="forbid")

    name: LabelText = "series"
    values: list[float]
    timestamps: list[TimestampText] | None = None
    unit: LabelText | None = None
    # how a series that is not a window of a handler column was made ("7-day mean of temp_max");
    # shown to readers and judges, and what the audit's data-fidelity check accepts instead of a column
    derived: LabelText | None = None

    @field_validator("values", "timestamps", mode="before")
    @classmethod
    def _not_too_long(cls, points: Any, info: ValidationInfo) -> Any:
        if isinstance(points, list) and len(points) > MAX_POINTS_PER_SERIES:
            raise ValueError(f"series has {len(points)} {info.field_name}; at most {MAX_POINTS_PER_SERIES} per series")
        return points

    @field_validator("values")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        if not values:
            raise ValueError("series has no values")
        bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            raise ValueError(
                f"series has {len(bad)} non-finite value(s) (NaN or inf), first at position {bad[0]}; "
                "drop or fill missing values before building the item"
            )
        return values

    @model_validator(mode="after")
    def _timestamps_match(self) -> Series:
        if self.timestamps is not None and len(self.timestamps) != len(self.values):
            raise ValueError(
                f"series '{self.name}' has {len(self.values)} values but {len(self.timestamps)} timestamps"
            )
        return self

    @model_serializer(mode="wrap")
    def _without_absent_derivation(self, dump: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a channel that is not derived serializes as before `derived` existed: item hashes (answer
        # caches, release checksums) of every stored item stay what they were
        data: dict[str, Any] = dump(self)
        if data.get("derived") is None:
            data.pop("derived", None)
        return data


class Item(BaseModel):
    """One question instance. A template may give `answer` (the correct option's text)
    instead of `answer_index`; both normalize to `answer_index`."""

    model_config = ConfigDict(extra="forbid")

    question: QuestionText
    options: list[OptionText]
    answer_index: int
    kind: ItemKind = ItemKind.mc
    series: list[Series] = Field(default_factory=list)
    context: ContextText | None = None
    rationale: ContextText | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _normalize_answer(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"an item must be a dict, got {type(data).__name__}")
        data = dict(data)
        channels = data.get("series")
        if isinstance(channels, (list, dict)) and len(channels) > MAX_CHANNELS:
            raise ValueError(f"an item has at most {MAX_CHANNELS} series (channels), got {len(channels)}")
        if isinstance(data.get("series"), dict):
            data["series"] = [{"name": k, **v} if isinstance(v, dict) else {"name": k, "values": v}
                              for k, v in data["series"].items()]
        answer = data.pop("answer", None)
        if answer is None:
            if "answer_index" not in data:
                raise ValueError("item has neither 'answer_index' nor 'answer'")
            return data
        options = data.get("options")
        if not isinstance(options, list):
            return data
        if isinstance(answer, int) and not isinstance(answer, bool):
            index = answer
        else:
            matches = [i for i, o in enumerate(options) if o == answer]
            if not matches:
                raise ValueError(f"answer {answer!r} is not one of the options {options!r}")
            index = matches[0]
        if "answer_index" in data and data["answer_index"] != index:
            raise ValueError(
                f"answer {answer!r} and answer_index {data['answer_index']} disagree; give only one"
            )
        data["answer_index"] = index
        return data

    @field_validator("question")
    @classmethod
    def _question_not_empty(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("question is empty")
        return question

    @field_validator("options")
    @classmethod
    def _options_valid(cls, options: list[str]) -> list[str]:
        if len(options) < MIN_OPTIONS:
            raise ValueError(f"an item needs at least {MIN_OPTIONS} options, got {len(options)}")
        if len(options) > MAX_OPTIONS:
            raise ValueError(f"an item has at most {MAX_OPTIONS} options, got {len(options)}")
        if any(not o.strip() for o in options):
            raise ValueError("an option is empty")
        normalized = [" ".join(o.split()).casefold() for o in options]
        dupes = sorted({options[i] for i, o in enumerate(normalized) if normalized.count(o) > 1})
        if dupes:
            raise ValueError(f"duplicate options: {dupes}; every option must be distinct")
        return options

    @field_validator("series")
    @classmethod
    def _points_per_item(cls, series: list[Series]) -> list[Series]:
        total = sum(len(s.values) for s in series)
        if total > MAX_POINTS_PER_ITEM:
            raise ValueError(f"the item's series hold {total} values in all; at most {MAX_POINTS_PER_ITEM}")
        return series

    @model_validator(mode="after")
    def _answer_in_range(self) -> Item:
        if not 0 <= self.answer_index < len(self.options):
            raise ValueError(
                f"answer_index {self.answer_index} is out of range for {len(self.options)} options "
                f"(valid: 0..{len(self.options) - 1})"
            )
        if self.kind is ItemKind.tf and len(self.options) != 2:
            raise ValueError(f"a true/false item has exactly 2 options, got {len(self.options)}")
        return self

    @property
    def answer(self) -> str:
        return self.options[self.answer_index]

    @property
    def answer_letter(self) -> str:
        return chr(ord("A") + self.answer_index)


class Provenance(BaseModel):
    """Where a template came from."""

    model_config = ConfigDict(extra="forbid")

    origin: Literal["curated", "generated", "user", "imported"] = "curated"
    generator: str | None = None
    parent_hash: str | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    # an imported (static) group: the file its items came from, by name, format and sha256
    source_file: str | None = Field(None, exclude_if=lambda v: v is None)
    source_format: str | None = Field(None, exclude_if=lambda v: v is None)
    source_sha256: str | None = Field(None, exclude_if=lambda v: v is None)


def content_hash(source: str) -> str:
    """sha256 of the template source with line endings normalized: the version key."""
    return hashlib.sha256(source.replace("\r\n", "\n").encode("utf-8")).hexdigest()


TemplateKind = Literal["code", "static"]


class Template(BaseModel):
    """An item template: Python source defining `question(num_samples) -> list[dict]` (kind
    ``code``), or a group of stored items imported from an existing benchmark (kind ``static``:
    the source is the items as JSON, see `items.static`)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    source: str
    title: str
    category: str
    concepts: list[str] = Field(default_factory=list)
    handler: str | None = None
    difficulty: Literal["easy", "medium", "hard"] | None = None
    rationale: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    kind: TemplateKind = "code"

    @property
    def content_hash(self) -> str:
        return content_hash(self.source)


# --- verdict records (docs/architecture.md, "Data flow") ------------------------------------------


class RunStatus(str, Enum):
    """How a sandboxed run ended."""

    ok = "ok"
    refused = "refused"  # the policy rejected the source at compile time
    error = "error"  # it raised at run time
    killed = "killed"  # a limit ended it
    rejected = "rejected"  # its output failed validation


class StructureReport(BaseModel):
    """The structure check's verdict on one template."""

    status: RunStatus
    items: list[Item] = Field(default_factory=list)
    error: str | None = None
    traceback_tail: str | None = None
    elapsed_ms: float = 0.0
    deterministic: bool | None = None
    varied: bool | None = None
    seeds: list[int] = Field(default_factory=list)  # the seeds the check ran (drawn per check)
    num_samples: int | None = None  # items per run (drawn per check unless given)

    @property
    def passed(self) -> bool:
        return self.status is RunStatus.ok


class AuditSolverResult(BaseModel):
    """One blind solver of the item audit: its held-out accuracy against its chance level."""

    solver: str
    applicable: int  # items it answered (it abstains where its cue does not exist)
    correct: int
    accuracy: float | None
    chance: float | None  # mean of 1/len(options) over the answered items
    p_value: float | None  # exact one-sided Poisson-binomial test of accuracy > chance
    p_corrected: float | None  # Holm over the tested solvers
    gain: float | None = None  # (correct - expected by chance) / all audited items: what the cue is worth
    # the template audit's one-sided lower confidence bound on `gain` (its items are a sample of what
    # the template makes); None where the items are the whole population (an imported bank)
    gain_lower: float | None = None
    tested: bool
    # significant after correction and a gain of at least the configured excess (on confirmation: its
    # lower bound)
    shortcut: bool
    detail: str = ""  # what the solver learned, e.g. "the key is rank 2 of 4 (from the smallest)"
    # items it answered are never those it learned from: "content" (no item it was fitted on) or
    # "record" (no record named by an item it was fitted on: what it knows of a record's data is no cue)
    held_out: Literal["content", "record"] = "content"
    example: str = ""  # one held-out item it answered right without the series, for the feedback
    # the static audit states what its items could detect: the accuracy a solver needs to be
    # significant (before Holm) and the test's power against a cue worth `power_effect` over chance
    detectable_accuracy: float | None = None
    power: float | None = None


# What a finding of the audit says about a template, and what it does to the verdict:
# - "wrong": an item's key, data, dates or options disagree with its question (rejects);
# - "without_data": items can be answered from their texts alone, on records never seen (rejects);
# - "pool": how many different items the template makes (reported, never a rejection: a small
#   dataset makes a small pool, and that is no error in the items).
FindingKind = Literal["wrong", "without_data", "pool"]
FINDING_KINDS: dict[str, str] = {
    "wrong": "items whose key, data, dates or options disagree with the question on the data shown",
    "without_data": "items a solver that never sees the series answers from their texts alone",
    "pool": "the item pool (how many different items the template makes)",
}


class AuditFinding(BaseModel):
    """One item check of the audit (fidelity, keys, options, duplicates, ...) and its kind."""

    check: str
    passed: bool
    message: str
    kind: FindingKind = "wrong"


class ItemPool(BaseModel):
    """How many different items a template makes, read off the audit's draws: a property of the
    template (and of the data behind it) that the report, the review page and releases show, and
    that fresh-instance evaluation reads to warn before it repeats items; never a rejection."""

    items: int = Field(description="items drawn")
    distinct: int = Field(description="distinct items (question, options and series)")
    distinct_series: int = Field(description="distinct series shown")
    records: int | None = Field(None, description="distinct records the items name (None: they name none)")
    repeats_in_draw: float = Field(0.0, description="share of items repeating an earlier item of their own draw")
    recurring_keys: float = Field(0.0, description="share of items whose question came back from an earlier seed "
                                                   "with the same key")
    estimated_size: int | None = Field(None, description="estimated number of different items (Chao1 over the "
                                                         "draws); None when every item drawn was new")
    small: bool = Field(False, description="fewer different items than an evaluation of a few hundred would draw "
                                           "without repeats")

    def summary(self) -> str:
        size = (f"about {self.estimated_size} different items" if self.estimated_size is not None
                else "no repeats seen")
        records = f" from {self.records} record(s)" if self.records is not None else ""
        return (f"{self.distinct} distinct of {self.items} drawn{records}; {size}; "
                f"{self.recurring_keys:.0%} of questions came back with their key")

    def repeats_expected(self, n: int, *, after: int = 0) -> float:
        """The share of `n` fresh items expected to repeat an item already drawn (among themselves, or
        among `after` items drawn before, e.g. a release's own); 0 when the pool looks unbounded."""
        if self.estimated_size is None or n <= 0:
            return 0.0
        size = float(self.estimated_size)

        def distinct(draws: int) -> float:
            return size * (1.0 - math.exp(-draws / size))

        return max(0.0, 1.0 - (distinct(after + n) - distinct(after)) / n)


class AuditReport(BaseModel):
    """The item audit's verdict on one template: can its items be answered without the data?"""

    passed: bool
    solvers: list[AuditSolverResult] = Field(default_factory=list)
    findings: list[AuditFinding] = Field(default_factory=list)
    feedback: str | None = None  # each shortcut or failed check with its fix; None when passed
    n_items: int = 0
    n_distinct: int = 0
    seeds: list[int] = Field(default_factory=list)  # the seed of each run (drawn from the OS per audit)
    sizes: list[int] = Field(default_factory=list)  # the num_samples of each run, aligned with seeds
    # the audit of those runs failed: these fresh ones were drawn and the solvers and item checks
    # tested again on all of them (`audit.core.confirm_rejection`); empty when nothing needed confirming
    confirmation_seeds: list[int] = Field(default_factory=list)
    confirmation_sizes: list[int] = Field(default_factory=list)
    alpha: float = 0.01
    thresholds_lowered: list[str] = Field(default_factory=list)  # `name=value (default d)`
    elapsed_ms: float = 0.0
    error: str | None = None  # a run of the template failed during the audit
    pool: ItemPool | None = None  # the item pool: reported, never a rejection

    def solver(self, name: str) -> AuditSolverResult:
        return next(s for s in self.solvers if s.solver == name)

    def failed(self, kind: FindingKind) -> list[str]:
        """The failed checks (and, for "without_data", the blind solvers that won) of one kind."""
        checks = [f.check for f in self.findings if not f.passed and f.kind == kind]
        return [*self.shortcuts, *checks] if kind == "without_data" else checks

    @property
    def shortcuts(self) -> list[str]:
        return [s.solver for s in self.solvers if s.shortcut]

    @property
    def failed_checks(self) -> list[str]:
        return [f.check for f in self.findings if not f.passed]

    def summary(self) -> str:
        """One line: passed, or the failed checks by kind (wrong, answerable without the data)."""
        if self.passed:
            pool = f"; pool: {self.pool.summary()}" if self.pool is not None else ""
            return f"audit passed ({self.n_items} items, {self.n_distinct} distinct, no shortcut){pool}"
        parts = [f"{kind.replace('_', ' ')}: {', '.join(failed)}" for kind in ("wrong", "without_data")
                 if (failed := self.failed(kind))]
        return "audit failed: " + ("; ".join(parts) if parts else (self.error or "see feedback"))


class RederivedItem(BaseModel):
    """One item as the independent solver answered it: what its program returned, which options
    that value fits, and how that compares with the template's key."""

    seed: int
    index: int  # the item's position in its draw
    question: str
    options: list[str]
    key: int  # the template's answer_index
    value: str | float | bool | None = None  # what solve(item) returned (None: it failed)
    error: str | None = None  # why solve(item) gave no usable value
    fits: list[int] = Field(default_factory=list)  # the options the value fits (within their rounding)
    outcome: Literal["agree", "disagree", "ambiguous", "failed"]


class RederivationReport(BaseModel):
    """The re-derivation stage's verdict: does an independent computation, that never saw the
    template's source nor its keys, pick the keyed option? A solver model writes `solve(item)` from
    a few drawn items, run in the sandbox over fresh draws; items made by the building blocks are
    instead re-computed by trusted code from the block call they record (`replayed`).

    `status`:
    - ``agrees``: the keys are re-derived;
    - ``disagrees`` / ``ambiguous``: the key is not what the question asks on the data shown (or
      several options are), confirmed by more than one independent program that agree with each
      other (or by the trusted replay);
    - ``unconfirmed``: a program disagreed but the other programs did not confirm it (a solver's own
      mistake is no verdict on the template): flagged, not rejected;
    - ``reads_text``: a program that agrees gives the key even when each item shows another item's
      series: the answer can be read from the text, not the data;
    - ``not_rederivable``: no program that runs after the allowed tries (never counted as agreement).
    """

    status: Literal["agrees", "disagrees", "ambiguous", "unconfirmed", "reads_text", "not_rederivable"]
    solver: str  # the solver model's identity ("trusted block replay" for replayed items)
    program: str | None = None  # the solve(item) program that was run (stored per template version, reused)
    reused: bool = False  # the program was a stored one, not written now
    replayed: bool = False  # every item was re-computed from its recorded block call, by trusted code
    tries: int = 0  # programs the solver wrote, tries included (0 when reused or replayed)
    programs: int = 0  # independent programs (new conversations) whose verdicts were weighed
    n_items: int = 0
    agree: int = 0
    disagree: int = 0
    ambiguous: int = 0
    failed: int = 0
    seeds: list[int] = Field(default_factory=list)
    sizes: list[int] = Field(default_factory=list)
    examples: list[RederivedItem] = Field(default_factory=list)  # items that did not agree (a few)
    error: str | None = None  # why the solver could not re-derive the key, or a draw that failed
    # after a disagreement: what the other programs, each written from other items in a new
    # conversation, found (they confirm it, agree with the keys, or disagree among themselves)
    second_opinion: str | None = None
    # the agreeing program run again with each item showing another item's series: of `data_checked`
    # items it answered, how many still got the key (all of them: it reads the answer from the text)
    data_checked: int = 0
    data_kept_key: int = 0
    elapsed_ms: float = 0.0

    @property
    def answered(self) -> int:
        return self.agree + self.disagree + self.ambiguous

    @property
    def agreement(self) -> float | None:
        return self.agree / self.answered if self.answered else None

    @property
    def rejects(self) -> bool:
        """A verdict that the keys are wrong or need no data (not a solver's failure to compute them)."""
        return self.status in ("disagrees", "ambiguous", "reads_text")

    def summary(self) -> str:
        """One line for reasons and reports."""
        if self.status == "not_rederivable":
            return f"not re-derivable by {self.solver}: {self.error}"
        rate = "n/a" if self.agreement is None else f"{self.agreement:.0%}"
        parts = [f"{self.agree} of {self.answered} agree ({rate})"]
        parts += [f"{n} {what}" for n, what in ((self.disagree, "disagree"), (self.ambiguous, "ambiguous"),
                                               (self.failed, "unsolved")) if n]
        verb = {"agrees": "re-derived the key", "disagrees": "disagrees with the key",
                "ambiguous": "finds several options right",
                "unconfirmed": "disagreed, unconfirmed by the other programs",
                "reads_text": "reads the key from the text"}[self.status]
        second = f"; {self.second_opinion}" if self.second_opinion else ""
        data = (f"; with other items' series it kept the key on {self.data_kept_key} of {self.data_checked}"
                if self.data_checked else "")
        return f"{self.solver} {verb}: {', '.join(parts)} over {self.n_items} items{second}{data}"


class JudgeScore(BaseModel):
    """One judge's score on one criterion; `score` is None when the reply never parsed."""

    judge: str
    criterion: Literal["relevance", "unambiguity", "specificity", "solvability", "needs_series"]
    score: float | None = Field(default=None, ge=1, le=10)
    rationale: str = ""
    samples: list[float] = Field(default_factory=list)
    # probability-weighted at the score token, mean of sampled scores, or read in one pass
    method: Literal["logprobs", "samples", "score_first"] | None = None
    attempts: int = 0  # model calls made, retries of malformed replies included
    error: str | None = None  # why `score` is None
    # the judge's call gave no usable reply (failed, empty, cut): missing data, not a verdict on the template
    call_failed: Literal["failed", "empty", "cut"] | None = None


class StudentResponse(BaseModel):
    """One student's answer to one item."""

    student: str
    rank: int
    item_index: int
    blind: bool = False
    raw: str
    choice: int | None = None
    correct: bool = False


class CapabilityVerdict(BaseModel):
    """Whether accuracy rises with declared capability, with the statistic behind it."""

    accuracies: dict[str, float]
    statistic: float | None = None
    interval: tuple[float, float] | None = None
    reversal: bool = False
    blind_flag: bool = False
    reason: str = ""


class IRTParameters(BaseModel):
    """Template-level 2PL parameters with standard errors."""

    discrimination: float
    difficulty: float
    discrimination_se: float
    difficulty_se: float
    flags: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    """The final decision on a template version, with its reasons."""

    accepted: bool
    stage: Literal["structure", "audit", "rederivation", "judges", "students", "capability", "review"]
    reasons: list[str] = Field(default_factory=list)
