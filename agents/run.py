"""An authoring run: profile the handler, plan N briefs, run N template slots concurrently,
write the accepted templates and a report. Resumable.

Every slot is one thread of the slot graph in the checkpointer (``<run_id>:slot:<i>``) and the
plan is its own thread (``<run_id>:plan``). Running again with the same `run_id` reuses the plan,
skips finished slots (accepted, discarded or failed: no template is generated twice), and
continues unfinished ones from their last completed step (no accepted template is lost).

Concurrency: at most `slots` slots run at once (an asyncio semaphore); sandbox checks run in
their own thread pool, at most `sandbox_workers` at once, on one `SandboxPool`.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from itemsmith.agents.checkpoint import open_checkpointer
from itemsmith.agents.context import SlotContext, SlotEvent
from itemsmith.agents.errors import AgentError, ProviderConfigError
from itemsmith.agents.generator import build_prompt
from itemsmith.agents.graph import build_slot_graph
from itemsmith.agents.inference import ModelHandle
from itemsmith.agents.model_factory import StudentSpec, retry_policy
from itemsmith.agents.models import Attempt, Brief, PlanInfo, RunReport, SlotResult
from itemsmith.agents.planner import plan_briefs
from itemsmith.agents.profile import HandlerProfile, profile_handler
from itemsmith.agents.providers import PROVIDERS, ModelOptions, ModelSpec, SpecPolicy, make_model
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.agents.usage import UsageLedger, UsageTotals
from itemsmith.agents.verification_stages import (
    ItemAuditVerifier,
    build_review_models,
    content_stages,
    verification_stages,
)
from itemsmith.agents.verify import Verifier
from itemsmith.sandbox import SandboxLimits, SandboxPool
from itemsmith.templates_bank.items.rendering import TextFormat
from itemsmith.templates_bank.items.schema import Decision, Provenance, StructureReport, Template
from itemsmith.verification.capability import CapabilityConfig
from itemsmith.verification.judges import PanelConfig
from itemsmith.verification.structure import check_structure
from itemsmith.verification.students import PoolConfig

FINAL = ("accepted", "discarded", "failed")


class AuthorConfig(BaseModel):
    """One authoring request."""

    model_config = ConfigDict(extra="forbid")

    handler: str = Field(description="built-in handler name or a handler .py file")
    task: str = Field(min_length=3)
    templates: int = Field(5, ge=1, le=1000)
    generator: str | None = Field(None, description="model spec; default from settings (local when no keys)")
    planner: str | None = Field(None, description="model spec; default: the generator")
    max_rounds: int = Field(3, ge=1, le=20)
    slots: int = Field(4, ge=1, le=256, description="template slots run concurrently")
    sandbox_workers: int = Field(2, ge=1, le=64)
    num_samples: int | None = Field(None, ge=1, le=100,
                                    description="items per structure-check run; None: drawn per check")
    seed: int | None = Field(None, ge=0, description="structure-check seed; None: drawn per check (unpredictable)")
    examples: int = Field(2, ge=0, le=6, description="curated examples in the generator prompt")
    out_dir: Path = Path("out")
    checkpoint: str | None = Field(None, description="SQLite path, postgresql:// URL or 'memory'")
    checkpoint_setup: bool = Field(True, description="create the checkpoint tables if missing; False: they must "
                                                     "exist (`itemsmith db upgrade` made them)")
    run_id: str | None = None
    allow_fallback_briefs: bool = True
    generator_max_tokens: int | None = None
    planner_max_tokens: int | None = None
    judges: list[str] = Field(default_factory=list, description="judge model specs; none: no judge panel")
    judge_samples: int = Field(1, ge=1, le=20, description="sampled scores per judge and criterion")
    judge_retries: int = Field(2, ge=0, le=5, description="re-asks after a judge reply without a parseable score")
    panel: PanelConfig = Field(default_factory=PanelConfig, description="criteria, thresholds, item rendering")
    students: list[StudentSpec] = Field(default_factory=list, description="SPEC@RANK; none: no student pool")
    student_format: TextFormat = Field(TextFormat.plain, description="how students are shown items")
    pool: PoolConfig = Field(default_factory=PoolConfig, description="the blind condition")
    capability: CapabilityConfig = Field(default_factory=CapabilityConfig, description="which outcomes keep a template")
    review_max_tokens: int = Field(512, ge=16, le=8192, description="reply cap of judges and chat-mode students")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def slugify(text: str, limit: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:limit] or "template"


class PlanState(TypedDict, total=False):
    request: dict[str, Any]
    briefs: list[dict[str, Any]]
    info: dict[str, Any]


def _plan_graph(planner: Callable[[], Any], checkpointer: BaseCheckpointSaver) -> Any:
    async def plan(state: PlanState) -> dict[str, Any]:
        briefs, info = await planner()
        return {"briefs": [b.model_dump(mode="json") for b in briefs], "info": info.model_dump(mode="json")}

    graph = StateGraph(PlanState)
    graph.add_node("plan", plan)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", END)
    return graph.compile(checkpointer=checkpointer, name="itemsmith-plan")


def _thread(run_id: str, name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": f"{run_id}:{name}"}}


def slot_result(values: dict[str, Any], brief: Brief, *, run_id: str, handler: str, generator: str) -> SlotResult:
    """A slot's checkpointed state as a `SlotResult` (with its `Template` when accepted)."""
    attempts = [Attempt.model_validate(a) for a in values.get("attempts") or []]
    usage = UsageTotals()
    for a in attempts:
        calls = 0 if a.status == "provider_error" else (2 if a.repeated else 1)
        usage = usage.add(UsageTotals(calls=calls, input_tokens=a.input_tokens,
                                      output_tokens=a.output_tokens, cost_usd=a.cost_usd, retries=a.retries))
    status = values.get("status") or ("running" if attempts else "pending")
    template = None
    if status == "accepted" and values.get("source"):
        slot = int(values["slot"])
        template = Template(
            id=f"{run_id}-{slot:02d}-{slugify(brief.title, 30)}", source=values["source"], title=brief.title,
            category=brief.category, concepts=[c for c in (brief.concept,) if c], handler=handler,
            rationale=brief.answer_from, provenance=Provenance(origin="generated", generator=generator))
    decision = Decision.model_validate(values["decision"]) if values.get("decision") else None
    return SlotResult(slot=int(values.get("slot", 0)), brief=brief, status=status,
                      rounds=int(values.get("round", 0)), structure_passed_round=values.get("structure_passed_round"),
                      attempts=attempts, decision=decision, template=template, usage=usage,
                      wall_s=float(values.get("elapsed_s", 0.0)), error=values.get("error"))


def write_outputs(report: RunReport, run_dir: Path) -> None:
    """templates/<slot>_<slug>.py, templates.jsonl (Template records) and report.json."""
    folder = run_dir / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for slot in report.slots:
        if slot.template is None:
            continue
        path = folder / f"{slot.slot:02d}_{slugify(slot.brief.title)}.py"
        header = f'"""{slot.brief.title}\n\nCategory: {slot.brief.category}. Answer: {slot.brief.answer_from}\n"""\n\n'
        if not path.exists():
            path.write_text(header + slot.template.source)
        lines.append(slot.template.model_dump_json())
    (run_dir / "templates.jsonl").write_text("".join(line + "\n" for line in lines))
    (run_dir / "report.json").write_text(
        json.dumps({"summary": report.summary(), **report.model_dump(mode="json")}, indent=1))


class _Run:
    """The state of one `author` call (not persisted: rebuilt from the checkpointer on resume)."""

    def __init__(self, config: AuthorConfig, settings: AgentSettings, on_event: Callable[[SlotEvent], None] | None,
                 *, run_id: str, generator_spec: str, planner_spec: str, policy: SpecPolicy | None) -> None:
        self.config = config
        self.settings = settings
        self.policy = policy
        self.on_event = on_event
        self.run_id = run_id
        self.run_dir = config.out_dir / run_id
        self.generator_spec = generator_spec
        self.planner_spec = planner_spec
        self.retry = retry_policy(settings)
        self.accepted_titles: list[str] = []
        self.results: dict[int, SlotResult] = {}

    @property
    def request(self) -> dict[str, Any]:
        """What a resumed run must match."""
        return {"handler": self.config.handler, "task": self.config.task, "templates": self.config.templates}

    def emit(self, event: SlotEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def record(self, slot: int, values: dict[str, Any], brief: Brief) -> SlotResult:
        result = slot_result(values, brief, run_id=self.run_id, handler=self.config.handler,
                             generator=self.generator_spec)
        self.results[slot] = result
        if result.status == "accepted":
            self.accepted_titles.append(brief.title)
        return result

    async def plan(self, saver: BaseCheckpointSaver, profile: HandlerProfile,
                   planner_model: ModelHandle | None) -> tuple[list[Brief], PlanInfo, bool]:
        """The briefs (planned once, reused on resume), the planner's info, and whether it was reused."""
        config = self.config

        async def planner() -> tuple[list[Brief], PlanInfo]:
            handle = planner_model or make_model(
                self.planner_spec, settings=self.settings, policy=self.policy,
                options=ModelOptions(max_tokens=config.planner_max_tokens or min(4000, 250 * config.templates + 300)))
            return await plan_briefs(handle, profile=profile, task=config.task, n=config.templates, retry=self.retry,
                                     allow_fallback=config.allow_fallback_briefs)

        plan_graph = _plan_graph(planner, saver)
        plan_cfg = _thread(self.run_id, "plan")
        existing = await plan_graph.aget_state(plan_cfg)
        resumed = bool(existing.values.get("briefs"))
        if resumed:
            if existing.values.get("request") != self.request:
                raise AgentError(f"run {self.run_id!r} exists with different parameters: "
                                 f"{existing.values.get('request')}")
            values = existing.values
        else:
            values = await plan_graph.ainvoke({"request": self.request}, plan_cfg, durability="sync")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "plan.json").write_text(json.dumps(values, indent=1))
        return [Brief.model_validate(b) for b in values["briefs"]], PlanInfo.model_validate(values["info"]), resumed

    async def run_slots(self, saver: BaseCheckpointSaver, briefs: list[Brief], model: ModelHandle,
                        context: Callable[[], SlotContext]) -> list[SlotResult]:
        """Every slot's result: finished slots from the checkpointer, the others run now (at most
        `config.slots` and the model's own concurrency at once)."""
        slot_graph = build_slot_graph(max_rounds=self.config.max_rounds, checkpointer=saver)
        states = [await slot_graph.aget_state(_thread(self.run_id, f"slot:{i}")) for i in range(len(briefs))]
        pending: list[int] = []
        for i, (brief, state) in enumerate(zip(briefs, states, strict=True)):
            if state.values.get("status") in FINAL and not state.next:
                self.emit(_final_event(self.record(i, state.values, brief)))
            else:
                pending.append(i)
                self.emit(SlotEvent(slot=i, title=brief.title, phase="queued"))
        slot_context = context() if pending else None
        semaphore = asyncio.Semaphore(min(self.config.slots, model.max_concurrency or self.config.slots))

        async def run_slot(i: int) -> None:
            async with semaphore:
                payload = None if states[i].next else _new_slot_state(i, briefs[i])
                final = await slot_graph.ainvoke(payload, _thread(self.run_id, f"slot:{i}"), context=slot_context,
                                                 durability="sync")
                self.record(i, final, briefs[i])

        await asyncio.gather(*(run_slot(i) for i in pending))
        return [self.results[i] for i in range(len(briefs))]

    def report(self, slots: list[SlotResult], plan_info: PlanInfo, *, resumed: bool, wall_s: float) -> RunReport:
        usage = plan_info.usage
        for slot in slots:
            usage = usage.add(slot.usage)
        config = self.config
        return RunReport(run_id=self.run_id, handler=config.handler, task=config.task, generator=self.generator_spec,
                         planner=self.planner_spec, max_rounds=config.max_rounds, num_samples=config.num_samples,
                         seed=config.seed, slots=slots, plan=plan_info, wall_s=wall_s, resumed=resumed, usage=usage)


def _new_slot_state(slot: int, brief: Brief) -> dict[str, Any]:
    return {"slot": slot, "brief": brief.model_dump(mode="json"), "round": 0, "attempts": [], "status": "running",
            "elapsed_s": 0.0}


def _model_specs(config: AuthorConfig, settings: AgentSettings, generator_model: ModelHandle | None,
                 planner_model: ModelHandle | None) -> tuple[str, str]:
    """The generator's and the planner's specs; a bad spec fails here, before any work."""
    generator_spec = generator_model.spec if generator_model else (config.generator or settings.default_generator())
    planner_spec = planner_model.spec if planner_model else (config.planner or settings.planner or generator_spec)
    for spec in {generator_spec, planner_spec}:
        parsed = ModelSpec.parse(spec)
        if parsed.provider not in PROVIDERS:
            raise ProviderConfigError(f"unknown provider {parsed.provider!r}; known: {', '.join(sorted(PROVIDERS))}")
    return generator_spec, planner_spec


async def _in_thread(executor: ThreadPoolExecutor, function: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(executor, function, *args)


async def author(config: AuthorConfig, *, generator_model: ModelHandle | None = None,
                 planner_model: ModelHandle | None = None, verifiers: Sequence[Verifier] = (),
                 on_event: Callable[[SlotEvent], None] | None = None, settings: AgentSettings | None = None,
                 checker: Callable[[str], Any] | None = None, limits: SandboxLimits | None = None,
                 pool: SandboxPool | None = None, policy: SpecPolicy | None = None) -> RunReport:
    """Run (or resume, with `config.run_id`) an authoring job and write its outputs.

    `generator_model` / `planner_model` override the specs (tests pass scripted models);
    `checker` overrides the sandbox structure check (an async `source -> StructureReport`);
    `pool` reuses a running `SandboxPool` for `config.handler` (left open). `verifiers` replace the
    stages configured by `config.judges` / `config.students` (none of either: every template that
    passes the structure check is accepted). `policy` limits what the specs may name (a service
    request's: `SpecPolicy.service`; default: the operator's).
    """
    settings = settings or get_settings()
    generator_spec, planner_spec = _model_specs(config, settings, generator_model, planner_model)
    if generator_model is None:  # a missing key, extra or model file fails here, not after planning
        generator_model = make_model(generator_spec, settings=settings, policy=policy,
                                     options=ModelOptions(max_tokens=config.generator_max_tokens))
    if verifiers and (config.judges or config.students):
        raise AgentError("pass verifiers or configure judges/students, not both")
    run = _Run(config, settings, on_event, run_id=config.run_id or new_run_id(), generator_spec=generator_spec,
               planner_spec=planner_spec, policy=policy)
    review_models = build_review_models(config, settings=settings, policy=policy)
    started = time.monotonic()
    own_pool = pool is None
    executor = ThreadPoolExecutor(max_workers=config.sandbox_workers, thread_name_prefix="itemsmith-sandbox")
    try:
        if pool is None:
            pool = await _in_thread(executor, lambda: SandboxPool(config.handler, workers=config.sandbox_workers,
                                                                   limits=limits))
        sandbox = pool
        profile: HandlerProfile = await _in_thread(executor, profile_handler, sandbox)
        audit = ItemAuditVerifier(config.handler, pool=sandbox, limits=limits, executor=executor)
        stages: list[Verifier] = verification_stages(audit, [
            *verifiers, *content_stages(review_models, config, dataset=profile.description, retry=run.retry)])

        async def sandbox_check(source: str) -> StructureReport:
            return await _in_thread(executor, lambda: check_structure(
                source, config.handler, num_samples=config.num_samples, seed=config.seed, limits=limits, pool=sandbox))

        def slot_context() -> SlotContext:
            return SlotContext(
                model=generator_model, prompt=build_prompt(profile, config.task, examples=config.examples),
                check=checker or sandbox_check, profile=profile, verifiers=tuple(stages), retry=run.retry,
                max_rounds=config.max_rounds, ledger=UsageLedger(), accepted_titles=lambda: list(run.accepted_titles),
                on_event=run.emit)

        async with open_checkpointer(config.checkpoint or settings.checkpoint_url,
                                     default_path=config.out_dir / "checkpoints.sqlite",
                                     setup=config.checkpoint_setup) as saver:
            briefs, plan_info, resumed = await run.plan(saver, profile, planner_model)
            slots = await run.run_slots(saver, briefs, generator_model, slot_context)
        report = run.report(slots, plan_info, resumed=resumed, wall_s=time.monotonic() - started)
        write_outputs(report, run.run_dir)
        return report
    finally:
        if own_pool and pool is not None:
            pool.close()
        executor.shutdown(wait=False, cancel_futures=True)


def _final_event(result: SlotResult) -> SlotEvent:
    phase = result.status if result.status in FINAL else "queued"
    return SlotEvent(slot=result.slot, title=result.brief.title, phase=phase,
                     round=result.rounds,
                     input_tokens=result.usage.input_tokens, output_tokens=result.usage.output_tokens,
                     cost_usd=result.usage.cost_usd)


def author_sync(config: AuthorConfig, **kwargs: Any) -> RunReport:
    """`author` for synchronous callers."""
    return asyncio.run(author(config, **kwargs))
