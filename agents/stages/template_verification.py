"""One template through exactly the verification `author` runs on a generated one: the structure
check in the sandbox, the item audit, the re-derivation, the judge panel and the student pool, with
the same defaults (`agents.stages.pipeline.resolve_pipeline`) and models (`build_review_models`).

`itemsmith verify FILE --handler H` and the API's ``recheck`` job (a stored version, e.g. an edit
a reviewer saved) both call `verify_template`; it never refines: a rejection is the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.llm.factory import retry_policy
from itemsmith.agents.llm.providers import SpecPolicy
from itemsmith.agents.llm.usage import UsageTotals
from itemsmith.agents.profile import profile_handler
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.pipeline import Pipeline, StageInfo, check_models, resolve_pipeline
from itemsmith.agents.stages.verification_stages import (
    ItemAuditVerifier,
    build_review_models,
    content_stages,
    rederivation_stage,
    verification_stages,
)
from itemsmith.agents.stages.verify import VerificationResult, run_stages
from itemsmith.items.schema import Decision, StructureReport
from itemsmith.sandbox import SandboxLimits, SandboxPool
from itemsmith.verification.structure import check_structure

__all__ = ["TemplateVerification", "verify_template"]


class TemplateVerification(BaseModel):
    """The decision on one template and every stage's verdict."""

    decision: Decision
    structure: StructureReport
    results: list[VerificationResult] = Field(default_factory=list, description="each stage that ran, in order")
    stages: list[StageInfo] = Field(description="the pipeline: every stage, on or off, and why")

    @property
    def accepted(self) -> bool:
        return self.decision.accepted

    @property
    def errored(self) -> bool:
        """No verdict: the last stage that ran could not decide because its model calls failed."""
        return bool(self.results) and self.results[-1].errored

    def usage(self) -> UsageTotals:
        """Every stage's model calls: answered, cut and failed apart, tokens and cost."""
        totals = UsageTotals()
        for result in self.results:
            totals = totals.add(result.usage)
        return totals

    def summary(self) -> dict[str, Any]:
        """`accepted`, `errored` (no verdict: a stage's model calls failed), `stage` (the rejecting or
        errored stage, None when accepted), `reasons`, `usage` (the model calls by outcome, tokens,
        cost) and `stages`: each stage of the pipeline by name with `status` (on/off), `ran`,
        `errored`, `accepted` (None when it did not run or errored), its `reasons` and its typed
        `verdict`."""
        ran: dict[str, VerificationResult] = {}
        for result in self.results:
            ran.setdefault(result.decision.stage, result)
        stages: dict[str, Any] = {"structure": {
            "status": "on", "ran": True, "errored": False, "accepted": self.structure.passed,
            "reasons": [self.structure.error] if self.structure.error else [],
            "verdict": self.structure.model_dump(mode="json", exclude={"items"})}}
        for info in self.stages:
            if info.name == "structure":
                continue
            found = ran.get("students" if info.name == "capability" else info.name)
            errored = found is not None and found.errored
            stages[info.name] = {"status": info.status, "models": info.models, "about": info.reason,
                                 "ran": found is not None, "errored": errored,
                                 "accepted": None if found is None or errored else found.decision.accepted,
                                 "reasons": [] if found is None else found.decision.reasons,
                                 "verdict": None if found is None else _verdict(info.name, found)}
        return {"accepted": self.accepted, "errored": self.errored,
                "stage": None if self.accepted else self.decision.stage, "reasons": self.decision.reasons,
                "usage": self.usage().counts(), "stages": stages}


def _verdict(stage: str, result: VerificationResult) -> Any:
    record: BaseModel | None = {"audit": result.audit, "rederivation": result.rederivation,
                                "judges": result.judgement, "students": result.students,
                                "capability": result.capability}.get(stage)
    return None if record is None else record.model_dump(mode="json")


async def verify_template(source: str, config: AuthorConfig, *, settings: AgentSettings,
                          policy: SpecPolicy | None = None, pool: SandboxPool | None = None,
                          pipeline: Pipeline | None = None, programs: Mapping[str, str] | None = None,
                          on_stage: Callable[[str], None] | None = None,
                          limits: SandboxLimits | None = None) -> TemplateVerification:
    """Verify `source` against `config.handler` with the stages `config` resolves to (`pipeline`,
    default: resolved here). The structure check draws `config.num_samples` items under
    `config.seed` (None: drawn). `pool` reuses a running sandbox pool for the handler (left open);
    `programs` are stored re-derivation programs (content hash -> program); `limits`: the sandbox's (None:
    the settings'). A missing key or model
    fails before any template runs (`ProviderConfigError`)."""
    pipeline = pipeline or resolve_pipeline(config, settings)
    check_models(pipeline, None, None, settings)
    models = build_review_models(config, settings=settings, policy=policy, pipeline=pipeline)
    retry = retry_policy(settings)
    executor = ThreadPoolExecutor(max_workers=config.sandbox_workers, thread_name_prefix="itemsmith-verify")
    loop = asyncio.get_running_loop()
    own_pool = pool is None
    try:
        if pool is None:
            pool = await loop.run_in_executor(executor, lambda: SandboxPool(config.handler, workers=config.sandbox_workers,
                                                                            limits=limits))
        sandbox = pool
        structure = await loop.run_in_executor(executor, lambda: check_structure(
            source, config.handler, num_samples=config.num_samples, seed=config.seed, pool=sandbox))
        if not structure.passed:
            decision = Decision(accepted=False, stage="structure",
                                reasons=[structure.error or f"the template ended as {structure.status.value}"])
            return TemplateVerification(decision=decision, structure=structure, stages=pipeline.stages)
        profile = await loop.run_in_executor(executor, profile_handler, sandbox)
        audit = ItemAuditVerifier(config.handler, pool=sandbox, limits=limits, executor=executor,
                                  review_items=config.review_items)
        stages = verification_stages(
            audit, content_stages(models, config, dataset=profile.description, retry=retry),
            rederivation_stage(models, sandbox, retry=retry, executor=executor, programs=programs))
        decision, _, results = await run_stages(stages, source, structure, on_stage=on_stage)
        return TemplateVerification(decision=decision, structure=structure, results=results, stages=pipeline.stages)
    finally:
        if own_pool and pool is not None:
            pool.close()
        executor.shutdown(wait=False, cancel_futures=True)
