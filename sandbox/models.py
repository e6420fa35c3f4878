"""Typed records at the sandbox boundaries: requests to a worker, the child's envelope, results."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.items.schema import RunStatus


class RunResult(BaseModel):
    """How one sandboxed run of a template ended.

    `items` holds the validated items (plain JSON, `answer` normalized to `answer_index`) when
    `status` is ok, and the raw JSON items when the output was `rejected` by the item schema.
    `error` is one short line meant as feedback to a template author; `traceback_tail` lists
    the template's own frames only.
    """

    model_config = ConfigDict(extra="forbid")

    status: RunStatus
    items: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    traceback_tail: str | None = None
    printed: str = ""
    elapsed_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.ok


class RunRequest(BaseModel):
    """One template run, as the host sends it to a worker (zygote)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["run"] = "run"
    source: str
    num_samples: int = Field(ge=1)
    seed: int = Field(ge=0, lt=2**63)
    wall_seconds: float
    cpu_seconds: int
    memory_bytes: int
    output_bytes: int
    print_bytes: int
    max_open_files: int
    max_processes: int


class ChildEnvelope(BaseModel):
    """What a run's child writes to its pipe: untrusted, parsed with exact types on the host."""

    model_config = ConfigDict(extra="forbid", strict=True)

    status: Literal["ok", "refused", "error", "killed", "rejected"]
    items: list[Any] | None = None
    error: str | None = None
    traceback: str | None = None
    printed: str = ""
