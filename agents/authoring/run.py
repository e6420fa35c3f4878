"""An authoring run: profile the handler, plan N briefs, run N template slots concurrently,
write the accepted templates and a report. Resumable.

Every slot is one thread of the slot graph in the checkpointer (``<run_id>:slot:<i>``) and the
plan is its own thread (``<run_id>:plan``). Running again with the same `run_id` reuses the plan,
skips finished slots (accepted, discarded, or failed in an older run: no template is generated
twice), continues unfinished ones from their last completed step (no accepted template is lost)
and retries errored ones where they stopped (a provider that failed for good: agents.authoring.graph).
Running again a run whose slots have all finished and whose report is written changes nothing: it
returns the stored report (`report.json` is not rewritten).

Time: the plan thread keeps the run's `started_at` (the first session's start) and its working
time `work_s`, updated after every finished slot: the sum over the sessions that worked on the
run (the first one and each resume) of each one's time from its start to its last finished slot
or its end. Time while no session ran is not counted; the report's `wall_s` is this working time.

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
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from itemsmith.agents.authoring.checkpoint import open_checkpointer
from itemsmith.agents.authoring.context import Activity, SlotContext, SlotEvent
from itemsmith.agents.authoring.generator import build_prompt
from itemsmith.agents.authoring.graph import build_slot_graph
from itemsmith.agents.authoring.models import Attempt, Brief, PlanInfo, RunReport, SlotResult, describe_template
from itemsmith.agents.authoring.planner import plan_briefs
from itemsmith.agents.authoring.template_kind import template_kind
from itemsmith.agents.config import AuthorConfig, restarts_broken
from itemsmith.agents.errors import AgentError
from itemsmith.agents.llm.factory import retry_policy
from itemsmith.agents.llm.inference import ModelHandle, stream_tokens
from itemsmith.agents.llm.providers import PROVIDERS, ModelOptions, SpecPolicy, make_model
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.llm.usage import UsageLedger, UsageTotals
from itemsmith.agents.profile import HandlerProfile, profile_handler
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.agents.stages.pipeline import Pipeline, StageInfo, authoring_models, check_models, resolve_pipeline
from itemsmith.agents.stages.verification_stages import (
    ItemAuditVerifier,
    build_review_models,
    content_stages,
    rederivation_stage,
    verification_stages,
)
from itemsmith.agents.stages.verify import Verifier
from itemsmith.items.schema import Decision, Item, Provenance, StructureReport, Template
from itemsmith.sandbox import SandboxLimits, SandboxPool
from itemsmith.templates_bank.diversity import configured_embedder, items_diversity
from itemsmith.verification.structure import check_structure

FINAL = ("accepted", "discarded", "failed")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def slugify(text: str, limit: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:limit] or "template"


class PlanState(TypedDict, total=False):
    request: dict[str, Any]
    briefs: list[dict[str, Any]]
    info: dict[str, Any]
    started_at: str  # ISO time the run first started
    work_s: float  # the run's working time so far (see the module docstring)


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
        failed = int(a.status == "provider_error")
        usage = usage.add(UsageTotals(calls=1, failed_calls=failed, input_tokens=a.input_tokens,
                                      cached_input_tokens=a.cached_input_tokens, cache_write_tokens=a.cache_write_tokens,
                                      output_tokens=a.output_tokens, cost_usd=a.cost_usd, retries=a.retries))
    status = values.get("status") or ("running" if attempts else "pending")
    template = kind = None
    if status == "accepted" and values.get("source"):
        slot = int(values["slot"])
        kind = template_kind(values["source"])
        concept = kind.concept or brief.concept
        template = Template(
            id=f"{run_id}-{slot:02d}-{slugify(brief.title, 30)}", source=values["source"], title=brief.title,
            category=kind.category or brief.category, concepts=[c for c in (concept,) if c], handler=handler,
            rationale=brief.answer_from, provenance=Provenance(origin="generated", generator=generator))
    decision = Decision.model_validate(values["decision"]) if values.get("decision") else None
    return SlotResult(slot=int(values.get("slot", 0)), brief=brief, status=status,
                      rounds=int(values.get("round", 0)), structure_passed_round=values.get("structure_passed_round"),
                      attempts=attempts, decision=decision, template=template, usage=usage,
                      wall_s=float(values.get("elapsed_s", 0.0)), error=values.get("error"), kind=kind)


def _header(slot: SlotResult) -> str:
    """The category and concept a template file states: what its blocks compute, the slot's if other."""
    described = describe_template(slot)
    line = f"Category: {described['category']}. Concept: {described['concept'] or 'none given'}."
    if not described["filled"]:
        line += f" (Its slot asked for {described['asked']}: not filled.)"
    if described["skeleton_unchanged"]:
        line += " The generator prompt's skeleton with nothing changed but its block call and channel."
    return line


def write_outputs(report: RunReport, run_dir: Path) -> None:
    """templates/<slot>_<slug>.py, templates.jsonl (Template records) and report.json."""
    folder = run_dir / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for slot in report.slots:
        if slot.template is None:
            continue
        path = folder / f"{slot.slot:02d}_{slugify(slot.brief.title)}.py"
        header = f'"""{slot.brief.title}\n\n{_header(slot)}\nAnswer: {slot.brief.answer_from}\n"""\n\n'
        if not path.exists():
            path.write_text(header + slot.template.source)
        lines.append(slot.template.model_dump_json())
    (run_dir / "templates.jsonl").write_text("".join(line + "\n" for line in lines))
    (run_dir / "report.json").write_text(
        json.dumps({"summary": report.summary(), **report.model_dump(mode="json")}, indent=1))


class _Run:
    """The state of one `author` call (not persisted: rebuilt from the checkpointer on resume)."""

    def __init__(self, config: AuthorConfig, settings: AgentSettings, on_event: Callable[[SlotEvent], None] | None,
                 *, run_id: str, generator_spec: str, planner_spec: str, planner: ModelSpec,
                 policy: SpecPolicy | None, on_activity: Callable[[Activity], None] | None = None) -> None:
        self.config = config
        self.settings = settings
        self.policy = policy
        self.on_event = on_event
        self.on_activity = on_activity
        self.session_started = time.monotonic()
        self.started_at = datetime.now(UTC)  # the first session's, once the plan says so
        self.work_before = 0.0  # working time of the earlier sessions
        self._plan_graph: Any = None
        self._time_lock = asyncio.Lock()
        self.run_id = run_id
        self.run_dir = config.out_dir / run_id
        self.generator_spec = generator_spec  # the names the report records
        self.planner_spec = planner_spec
        self.planner = planner  # what the planner is built from when the caller passes no model
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

    def activity(self, activity: Activity) -> None:
        if self.on_activity is not None:
            self.on_activity(activity)

    @property
    def work_s(self) -> float:
        """The run's working time: the earlier sessions' and this one's so far."""
        return self.work_before + time.monotonic() - self.session_started

    async def save_work_time(self) -> None:
        """Persist `work_s` on the plan thread (a killed session keeps the time up to its last finished slot)."""
        async with self._time_lock:
            await self._plan_graph.aupdate_state(
                _thread(self.run_id, "plan"), {"work_s": self.work_s, "started_at": self.started_at.isoformat()},
                as_node="plan")

    async def stored_report(self) -> RunReport | None:
        """The written report of this run when every slot has finished and the request is the same; else None."""
        path = self.run_dir / "report.json"
        if not path.is_file():
            return None
        config = self.config
        async with open_checkpointer(config.checkpoint or self.settings.checkpoint_url,
                                     default_path=config.out_dir / "checkpoints.sqlite",
                                     setup=config.checkpoint_setup) as saver:
            plan = await saver.aget_tuple({"configurable": {"thread_id": f"{self.run_id}:plan", "checkpoint_ns": ""}})
            values = plan.checkpoint["channel_values"] if plan is not None else {}
            if not values.get("briefs") or values.get("request") != self.request:
                return None
            slot_graph = build_slot_graph(max_rounds=config.rounds, checkpointer=saver)
            for i in range(len(values["briefs"])):
                state = await slot_graph.aget_state(_thread(self.run_id, f"slot:{i}"))
                if state.values.get("status") not in FINAL or state.next:
                    return None
        return RunReport.model_validate_json(path.read_text())

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
                self.planner, settings=self.settings, policy=self.policy,
                options=ModelOptions(max_tokens=config.planner_max_tokens or min(4000, 250 * config.templates + 300),
                                     role="planner"))

            def streamed(tokens: int, prompt_tokens: int | None = None) -> None:
                self.activity(Activity(phase="planning", tokens=tokens, prompt_tokens=prompt_tokens))

            with stream_tokens(streamed) if self.on_activity is not None else nullcontext():
                return await plan_briefs(handle, profile=profile, task=config.task, n=config.templates,
                                         retry=self.retry, allow_fallback=config.allow_fallback_briefs)

        plan_graph = self._plan_graph = _plan_graph(planner, saver)
        plan_cfg = _thread(self.run_id, "plan")
        existing = await plan_graph.aget_state(plan_cfg)
        resumed = bool(existing.values.get("briefs"))
        if resumed:
            if existing.values.get("request") != self.request:
                raise AgentError(f"run {self.run_id!r} exists with different parameters: "
                                 f"{existing.values.get('request')}")
            values = existing.values
            # a run planned before `started_at` was kept: the plan's own first checkpoint is the closest
            started = values.get("started_at") or existing.created_at
            if started:
                self.started_at = datetime.fromisoformat(started)
            self.work_before = float(values.get("work_s") or 0.0)
        else:
            self.activity(Activity(phase="planning"))
            values = await plan_graph.ainvoke({"request": self.request, "started_at": self.started_at.isoformat()},
                                              plan_cfg, durability="sync")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "plan.json").write_text(json.dumps(values, indent=1))
        return [Brief.model_validate(b) for b in values["briefs"]], PlanInfo.model_validate(values["info"]), resumed

    async def run_slots(self, saver: BaseCheckpointSaver, briefs: list[Brief], model: ModelHandle,
                        context: Callable[[], SlotContext]) -> list[SlotResult]:
        """Every slot's result: finished slots from the checkpointer, the others run now (at most
        `config.slots` and the model's own concurrency at once)."""
        slot_graph = build_slot_graph(max_rounds=self.config.rounds, checkpointer=saver)
        states = [await slot_graph.aget_state(_thread(self.run_id, f"slot:{i}")) for i in range(len(briefs))]
        pending: list[int] = []
        for i, (brief, state) in enumerate(zip(briefs, states, strict=True)):
            if state.values.get("status") in FINAL and not state.next:
                self.emit(_final_event(self.record(i, state.values, brief)))
            else:
                pending.append(i)
                self.emit(SlotEvent(slot=i, title=brief.title, phase="queued"))
        slot_context = context() if pending else None
        self.activity(Activity(phase="authoring"))
        semaphore = asyncio.Semaphore(min(self.config.slots, model.max_concurrency or self.config.slots))

        async def run_slot(i: int) -> None:
            async with semaphore:
                if states[i].next:
                    payload: dict[str, Any] | None = None
                elif states[i].values.get("status") == "errored":  # re-entered where it stopped (agents.authoring.graph)
                    payload = {"status": "running"}
                else:
                    payload = _new_slot_state(i, briefs[i])
                final = await slot_graph.ainvoke(payload, _thread(self.run_id, f"slot:{i}"), context=slot_context,
                                                 durability="sync")
                self.record(i, final, briefs[i])
                await self.save_work_time()

        await asyncio.gather(*(run_slot(i) for i in pending))
        return [self.results[i] for i in range(len(briefs))]

    def report(self, slots: list[SlotResult], plan_info: PlanInfo, *, resumed: bool,
               stages: list[StageInfo]) -> RunReport:
        usage = plan_info.usage
        for slot in slots:
            usage = usage.add(slot.usage)
        config = self.config
        reviewed = _reviewed_items(slots)
        diversity = items_diversity(reviewed, *configured_embedder()) if reviewed else None
        return RunReport(run_id=self.run_id, handler=config.handler, task=config.task, generator=self.generator_spec,
                         planner=self.planner_spec, max_rounds=config.rounds, num_samples=config.num_samples,
                         seed=config.seed, slots=slots, plan=plan_info, started_at=self.started_at,
                         finished_at=datetime.now(UTC), wall_s=self.work_s, resumed=resumed, usage=usage,
                         stages=stages, diversity=diversity)


def _reviewed_items(slots: Sequence[SlotResult]) -> dict[str, list[Item]]:
    """Each accepted template's items that its content stages saw (the item audit's fresh-seed
    items, kept in the report; the checkpointed structure report drops its items)."""
    reviewed: dict[str, list[Item]] = {}
    for slot in slots:
        if slot.status == "accepted" and slot.template is not None and slot.attempts:
            items = next((r.review_items for r in slot.attempts[-1].verification if r.review_items), [])
            if items:
                reviewed[slot.template.id] = items
    return reviewed


def _new_slot_state(slot: int, brief: Brief) -> dict[str, Any]:
    return {"slot": slot, "brief": brief.model_dump(mode="json"), "round": 0, "attempts": [], "status": "running",
            "elapsed_s": 0.0}


def _model_specs(config: AuthorConfig, settings: AgentSettings) -> tuple[ModelSpec, ModelSpec]:
    """The generator's and the planner's specs; an unknown provider fails here, before any work."""
    generator, planner = authoring_models(config, settings)
    for spec in {generator, planner}:
        PROVIDERS.resolve(spec.provider)
    return generator, planner


def _verifier_name(verifier: Verifier) -> str:
    return str(getattr(verifier, "__name__", type(verifier).__name__))


async def _in_thread(executor: ThreadPoolExecutor, function: Callable[..., Any], *args: Any) -> Any:
    return await asyncio.get_running_loop().run_in_executor(executor, function, *args)


async def author(config: AuthorConfig, *, generator_model: ModelHandle | None = None,
                 planner_model: ModelHandle | None = None, verifiers: Sequence[Verifier] = (),
                 on_event: Callable[[SlotEvent], None] | None = None, settings: AgentSettings | None = None,
                 checker: Callable[[str], Any] | None = None, limits: SandboxLimits | None = None,
                 pool: SandboxPool | None = None, profile: HandlerProfile | None = None,
                 policy: SpecPolicy | None = None, pipeline: Pipeline | None = None,
                 on_activity: Callable[[Activity], None] | None = None,
                 on_checked: Callable[[], None] | None = None) -> RunReport:
    """Run (or resume, with `config.run_id`) an authoring job and write its outputs.

    `generator_model` / `planner_model` override the specs (tests pass scripted models);
    `checker` overrides the sandbox structure check (an async `source -> StructureReport`);
    `pool` reuses a running `SandboxPool` for `config.handler` (left open), and `profile` is its
    handler's profile when the caller made it (`profile_handler(pool)`: a handler that does not load
    is then reported before the agents are imported). `verifiers` replace the
    judges and students (`config` must then name none). `pipeline` is the caller's
    `resolve_pipeline(config, settings)` (e.g. printed as a header before the run); default:
    resolved here. `policy` limits what the specs may name (a service request's:
    `SpecPolicy.service`; default: the operator's). `on_event` gets every slot's `SlotEvent`s;
    `on_activity` the run's phases and the streamed token counts (`Activity`: live displays);
    `on_checked` is called once every role's model is known to be buildable here (its key, its
    local model files: `check_models`, before anything runs); then the handler is loaded and
    profiled in the sandbox and the models are built, all before the first model call, so each
    of these mistakes is reported within seconds.

    A finished run (every slot final, its report written) is not run again: its stored report is
    returned and nothing is written.
    """
    settings = settings or get_settings()
    generator, planner = _model_specs(config, settings)
    generator_spec = generator_model.spec if generator_model else str(generator)
    planner_spec = planner_model.spec if planner_model else str(planner)
    pipeline = pipeline or resolve_pipeline(config, settings, custom=[_verifier_name(v) for v in verifiers])
    check_models(pipeline, None if generator_model else generator, None if planner_model else planner, settings)
    run = _Run(config, settings, on_event, run_id=config.run_id or new_run_id(), generator_spec=generator_spec,
               planner_spec=planner_spec, planner=planner, policy=policy, on_activity=on_activity)
    if config.run_id is not None and (stored := await run.stored_report()) is not None:
        for slot in stored.slots:
            run.emit(_final_event(slot))
        run.activity(Activity(phase="finished earlier"))
        return stored
    if on_checked is not None:
        on_checked()
    own_pool = pool is None
    executor = ThreadPoolExecutor(max_workers=config.sandbox_workers, thread_name_prefix="itemsmith-sandbox")
    try:
        run.activity(Activity(phase="profiling"))
        if pool is None:
            pool = await _in_thread(executor, lambda: SandboxPool(config.handler, workers=config.sandbox_workers,
                                                                   limits=limits))
        sandbox = pool
        if profile is None:
            profile = await _in_thread(executor, profile_handler, sandbox)
        if generator_model is None:  # an unknown model of a hosted provider fails here, not after planning
            generator_model = make_model(generator, settings=settings, policy=policy,
                                         options=ModelOptions(max_tokens=config.generator_max_tokens,
                                                              role="generator"))
        review_models = build_review_models(config, settings=settings, policy=policy, pipeline=pipeline)
        audit = ItemAuditVerifier(config.handler, pool=sandbox, limits=limits, executor=executor,
                                  review_items=config.review_items)
        stages: list[Verifier] = verification_stages(audit, [
            *verifiers, *content_stages(review_models, config, dataset=profile.description, retry=run.retry)],
            rederivation_stage(review_models, sandbox, retry=run.retry, executor=executor))

        async def sandbox_check(source: str) -> StructureReport:
            return await _in_thread(executor, lambda: check_structure(
                source, config.handler, num_samples=config.num_samples, seed=config.seed, limits=limits, pool=sandbox))

        restart = restarts_broken(config.restart_broken, generator_model.provider)

        def slot_context() -> SlotContext:
            return SlotContext(
                model=generator_model, prompt=build_prompt(profile, config.task, examples=config.examples,
                                                           restart_broken=restart),
                check=checker or sandbox_check, profile=profile, verifiers=tuple(stages), retry=run.retry,
                max_rounds=config.rounds, ledger=UsageLedger(), accepted_titles=lambda: list(run.accepted_titles),
                on_event=run.emit, on_activity=on_activity)

        async with open_checkpointer(config.checkpoint or settings.checkpoint_url,
                                     default_path=config.out_dir / "checkpoints.sqlite",
                                     setup=config.checkpoint_setup) as saver:
            briefs, plan_info, resumed = await run.plan(saver, profile, planner_model)
            slots = await run.run_slots(saver, briefs, generator_model, slot_context)
            run.activity(Activity(phase="reporting"))
            await run.save_work_time()
        report = run.report(slots, plan_info, resumed=resumed, stages=pipeline.stages)
        write_outputs(report, run.run_dir)
        run.activity(Activity(phase="done"))
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
