"""The authoring request: what a user asks an authoring run for, defined once.

`RunSettings` are the knobs of a run (how many templates, which models, how many rounds, ...);
`AuthoringRequest` adds what the run is about (handler and task). Every entry point is built from
them with the same names and bounds: the command line maps its options onto `AuthorConfig`
(`agents.authoring.run`, which adds where the run writes), the service's author job request adds the bank it
fills, and the API's bank settings are `RunSettings` with the server's spec policy. Model specs are
parsed here, once (`agents.llm.spec.ModelSpecField`), and written back as their text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.agents.llm.spec import ModelSpecField, StudentSpec
from itemsmith.items.text_format import TextFormat
from itemsmith.verification.stage_configs import CapabilityConfig, PanelConfig, PoolConfig

__all__ = ["AuthorConfig", "AuthoringRequest", "JudgeSpecs", "RunSettings", "StudentSpecs", "restarts_broken"]

JudgeSpecs = Annotated[list[ModelSpecField] | None, Field(
    max_length=10, description="judge model specs of the panel, e.g. openai:gpt-4o; None: the default panel of the "
                               "settings (ITEMSMITH_DEFAULT_JUDGES, those installed); []: no panel")]
StudentSpecs = Annotated[list[StudentSpec] | None, Field(
    max_length=10, description="students as SPEC@RANK (larger rank: more capable); None: the default ladder of the "
                               "settings (ITEMSMITH_DEFAULT_STUDENTS, those installed); []: no student pool")]


class RunSettings(BaseModel):
    """How an authoring run works: the models, its size and its rounds."""

    model_config = ConfigDict(extra="forbid")

    templates: int = Field(5, ge=1, le=1000, description="template slots to fill")
    generator: ModelSpecField | None = Field(None, description="model spec; default from the settings (a hosted model "
                                                               "when its key is set, else the local model)")
    planner: ModelSpecField | None = Field(None, description="model spec; default: the generator")
    rounds: int = Field(3, ge=1, le=20, description="generate/refine rounds per slot")
    slots: int = Field(4, ge=1, le=256, description="template slots authored concurrently")
    sandbox_workers: int = Field(2, ge=1, le=64)
    num_samples: int | None = Field(None, ge=1, le=100,
                                    description="items per structure-check run; None: drawn per check")
    seed: int | None = Field(None, ge=0, le=2**31 - 1,
                             description="structure-check seed; None: drawn per check (a template cannot "
                                         "fingerprint it)")
    examples: int = Field(1, ge=0, le=6, description="curated examples per slot in the generator prompt (those nearest "
                                                     "its brief)")
    restart_broken: bool | None = Field(
        None, description="after a round whose code did not run (or was resent), start the next one afresh "
                          "from the brief without the curated example instead of refining that code; None: for a "
                          "local generator")
    judges: JudgeSpecs = None
    students: StudentSpecs = None


class AuthoringRequest(RunSettings):
    """An authoring run: a handler, a task and how to run it."""

    handler: str = Field(min_length=1, max_length=500, description="built-in handler name or a handler .py file")
    task: str = Field(min_length=3, max_length=4000, description="what the benchmark should test, in plain words")


class AuthorConfig(AuthoringRequest):
    """One authoring run as `author` executes it: the request, where it writes and checkpoints, and the
    verification stages' finer settings."""

    out_dir: Path = Path("out")
    checkpoint: str | None = Field(None, description="SQLite path, postgresql:// URL or 'memory'")
    checkpoint_setup: bool = Field(True, description="create the checkpoint tables if missing; False: they must "
                                                     "exist (`itemsmith db upgrade` made them)")
    run_id: str | None = None
    allow_fallback_briefs: bool = True
    generator_max_tokens: int | None = None
    planner_max_tokens: int | None = None
    judge_samples: int = Field(1, ge=1, le=20, description="sampled scores per judge and criterion")
    judge_retries: int = Field(2, ge=0, le=5, description="re-asks after a judge reply without a parseable score")
    panel: PanelConfig = Field(default_factory=PanelConfig, description="criteria, thresholds, item rendering")
    student_format: TextFormat = Field(TextFormat.compact, description="how students are shown items (compact: "
                                       "every value, each channel on one line, as the judges read them)")
    pool: PoolConfig = Field(default_factory=PoolConfig, description="the blind condition")
    capability: CapabilityConfig = Field(default_factory=CapabilityConfig, description="which outcomes keep a template")
    review_max_tokens: int = Field(512, ge=16, le=8192, description="reply cap of judges and chat-mode students")
    review_items: int = Field(20, ge=1, le=200, description="fresh-seed items the judges and students are given "
                                                            "(at least this many; the students answer every one)")
    rederivation: bool | None = Field(None, description="run the re-derivation stage (a solver model re-derives the "
                                                        "keys from the items alone); None: the settings' default")
    solver: ModelSpecField | None = Field(None, description="model spec of the re-derivation solver; None: the "
                                                            "settings' solver, else the generator")


def restarts_broken(configured: bool | None, generator_provider: str) -> bool:
    """Whether a round after code that did not run restarts from the brief without the curated
    example (`GeneratorPrompt.restart_broken`): as configured, else for a local generator. Measured
    on Qwen2.5-Coder-1.5B: its refinements fixed none of 14 templates that did not run (three quick
    starts), while a prompt without the curated example gave code that ran for 5 of 8 fixed briefs,
    with it 3 of 8 (benchmarks/generator_examples.py)."""
    if configured is not None:
        return configured
    return generator_provider == "local"
