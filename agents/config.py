"""The authoring request: what a user asks an authoring run for, defined once.

`RunSettings` are the knobs of a run (how many templates, which models, how many rounds, ...);
`AuthoringRequest` adds what the run is about (handler and task). Every entry point is built from
them with the same names and bounds: the command line maps its options onto `AuthorConfig`
(`agents.run`, which adds where the run writes), the service's author job request adds the bank it
fills, and the API's bank settings are `RunSettings` with the server's spec policy.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from itemsmith.agents.model_factory import StudentSpec

__all__ = ["AuthoringRequest", "JudgeSpecs", "RunSettings", "StudentSpecs"]

JudgeSpecs = Annotated[list[str] | None, Field(
    max_length=10, description="judge model specs of the panel, e.g. openai:gpt-4o; None: the default panel of the "
                               "settings (ITEMSMITH_DEFAULT_JUDGES, those installed); []: no panel")]
StudentSpecs = Annotated[list[StudentSpec] | None, Field(
    max_length=10, description="students as SPEC@RANK (larger rank: more capable); None: the default ladder of the "
                               "settings (ITEMSMITH_DEFAULT_STUDENTS, those installed); []: no student pool")]


class RunSettings(BaseModel):
    """How an authoring run works: the models, its size and its rounds."""

    model_config = ConfigDict(extra="forbid")

    templates: int = Field(5, ge=1, le=1000, description="template slots to fill")
    generator: str | None = Field(None, max_length=500,
                                  description="model spec; default from the settings (a hosted model when its key "
                                              "is set, else the local model)")
    planner: str | None = Field(None, max_length=500, description="model spec; default: the generator")
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
