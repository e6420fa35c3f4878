"""The hosted-provider scenarios, run against the local fakes
(`tests.agents.llm.fake_providers`) through the real model factory and LangChain clients: what was
sent, what failed, what was stored, and what itemsmith's meter says it cost against the fake's
billing. `tests/agents/llm/test_hosted_contract.py` asserts on them; `benchmarks/hosted_providers.py`
prints them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from itemsmith.agents.llm.factory import build_judges, build_students, retry_policy
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.llm.usage import UsageTotals
from itemsmith.agents.settings import AgentSettings
from itemsmith.agents.stages.verification_stages import JudgePanelVerifier, StudentPoolVerifier
from itemsmith.items.schema import Item, StructureReport
from itemsmith.verification.capability import CapabilityConfig
from itemsmith.verification.judges import PanelConfig
from itemsmith.verification.students import PoolConfig

from .fake_providers import COMPATIBLE_SERVERS, FakeProviders, fake_env, serve


def review_items(count: int = 8, points: int = 200, seed: int = 0) -> list[Item]:
    rng = np.random.default_rng(seed)
    items = []
    for index in range(count):
        values = np.round(np.cumsum(rng.normal(size=points)), 2).tolist()
        answer = int(np.argmax([values[-1] > values[0], values[-1] <= values[0]]))
        items.append(Item(question=f"Series {index}: does the level end higher than it starts?",
                          options=["Higher", "Not higher"], answer_index=answer,
                          series=[{"name": "level", "values": values}]))
    return items


def _report(items: list[Item]) -> StructureReport:
    return StructureReport.model_validate({"status": "ok", "passed": True, "items": [i.model_dump() for i in items],
                                           "elapsed_ms": 1.0})


@contextmanager
def fakes(**env: str) -> Iterator[tuple[FakeProviders, AgentSettings]]:
    """The fakes running, and settings pointing at them (plus `env`), restored afterwards."""
    with serve() as fake:
        saved = dict(os.environ)
        os.environ.update({**fake_env(fake), "ITEMSMITH_BACKOFF_INITIAL_S": "0.05", "ITEMSMITH_BACKOFF_MAX_S": "0.2",
                           **env})
        try:
            yield fake, AgentSettings()
        finally:
            os.environ.clear()
            os.environ.update(saved)


def _measure(fake: FakeProviders, totals: UsageTotals, **extra: Any) -> dict[str, Any]:
    billed = fake.billed
    metered = totals.cost_usd
    return {
        "calls_sent": len(fake.calls), "http_errors": {str(s): len(fake.sent(s)) for s in (400, 404, 429)
                                                       if fake.sent(s)},
        "answered": totals.answered_calls, "cut": totals.cut_calls, "failed": totals.failed_calls,
        "cached_input_tokens": totals.cached_input_tokens, "cache_write_tokens": totals.cache_write_tokens,
        "metered_usd": metered, "billed_usd": billed,
        "cost_ratio": None if metered is None or billed == 0 else round(metered / billed, 4), **extra}


def reasoning_budget(items: int = 6, *, reasoning_budget_tokens: int | None = None,
                     effort: str | None = "low") -> dict[str, Any]:
    """gpt-5 students answer `items` items (512-token reply budget). With the role's reasoning
    budget set to 0 and no effort named (the old behaviour) the reasoning fills the budget."""
    with fakes() as (fake, settings):
        update: dict[str, Any] = {"reasoning_effort": effort}
        if reasoning_budget_tokens is not None:
            update["reasoning_budget_tokens"] = {"student": reasoning_budget_tokens}
        settings = settings.model_copy(update=update)
        students = build_students([StudentSpec.model_validate("openai:gpt-5-mini@1"),
                                   StudentSpec.model_validate("openai:gpt-5-nano@2")], settings=settings,
                                  max_tokens=512)
        verifier = StudentPoolVerifier(students, PoolConfig(blind=False), CapabilityConfig(), task="levels",
                                       dataset="levels", retry=retry_policy(settings))
        result = asyncio.run(verifier("source", _report(review_items(items, points=40))))
        stored = len(result.students.responses) if result.students else 0
        return _measure(fake, result.usage, stored_responses=stored, not_answered=len(result.students.failed)
                        if result.students else 0, stage="errored" if result.errored else
                        ("accepted" if result.decision.accepted else "rejected"))


def temperature_rules(items: int = 3) -> dict[str, Any]:
    """Judges that reject temperature (o1, o3, o4-mini, claude-opus-4-7) beside one that takes it."""
    specs = ["openai:o1", "openai:o3", "openai:o4-mini", "anthropic:claude-opus-4-7", "anthropic:claude-sonnet-4-5"]
    with fakes() as (fake, settings):
        judges = build_judges([ModelSpec.parse(spec) for spec in specs], settings=settings, samples=1)
        verifier = JudgePanelVerifier(judges, PanelConfig(), task="levels", dataset="levels",
                                      retry=retry_policy(settings))
        result = asyncio.run(verifier("source", _report(review_items(items, points=40))))
        scores = result.judgement.scores if result.judgement else []
        return _measure(fake, result.usage, judges=len(specs), scores=sum(s.score is not None for s in scores),
                        stage="errored" if result.errored else ("accepted" if result.decision.accepted else
                                                                 "rejected"))


def rate_limit_window(window_s: float = 20.0, *, max_wait_s: float | None = None) -> dict[str, Any]:
    """A judge panel while the provider answers 429 (with Retry-After) for `window_s` seconds."""
    env = {} if max_wait_s is None else {"ITEMSMITH_MAX_RETRY_WAIT_S": str(max_wait_s)}
    with fakes(**env) as (fake, settings):
        judges = build_judges([ModelSpec.parse("openai:gpt-4o-mini"), ModelSpec.parse("anthropic:claude-haiku-4-5")],
                              settings=settings, samples=1)
        verifier = JudgePanelVerifier(judges, PanelConfig(criteria=("relevance", "solvability")), task="levels",
                                      dataset="levels", retry=retry_policy(settings))
        fake.rate_limit_for(window_s)
        started = time.monotonic()
        result = asyncio.run(verifier("source", _report(review_items(3, points=40))))
        return _measure(fake, result.usage, wall_s=round(time.monotonic() - started, 1),
                        stage="errored" if result.errored else ("accepted" if result.decision.accepted else
                                                                 "rejected"), feedback=result.feedback)


def compatible_cap(cap: int, items: int = 3) -> dict[str, Any]:
    """A student on the emulated vLLM server beside one on the emulated Ollama server (through
    `openai_compatible`, a URL spec each), answering `items` items under a reply cap of `cap` tokens."""
    with fakes() as (fake, settings):
        specs = [StudentSpec.model_validate(f"openai_compatible:{COMPATIBLE_SERVERS[server].model}@"
                                            f"{fake.base_url}/{server}/v1@{rank}")
                 for rank, server in enumerate(COMPATIBLE_SERVERS, 1)]
        students = build_students(specs, settings=settings, max_tokens=cap)
        verifier = StudentPoolVerifier(students, PoolConfig(blind=False), CapabilityConfig(), task="levels",
                                       dataset="levels", retry=retry_policy(settings))
        result = asyncio.run(verifier("source", _report(review_items(items, points=40))))
        answered = fake.sent(200)
        return _measure(fake, result.usage,
                        caps_received={s: sorted({c.body.get("max_tokens") for c in answered if c.api == s})
                                       for s in COMPATIBLE_SERVERS},
                        max_completion_tokens_sent=any("max_completion_tokens" in c.body for c in answered),
                        longest_reply_tokens=max(c.output_tokens for c in answered),
                        stored_responses=len(result.students.responses) if result.students else 0,
                        stage="errored" if result.errored else ("accepted" if result.decision.accepted else
                                                                 "rejected"))


def cached_prompts(templates: int = 3) -> dict[str, Any]:
    """Judges over long shared prompts: Anthropic's breakpoint and OpenAI's automatic cache."""
    with fakes() as (fake, settings):
        judges = build_judges([ModelSpec.parse("anthropic:claude-sonnet-4-5"), ModelSpec.parse("openai:gpt-5-mini")],
                              settings=settings, samples=1)
        panel = PanelConfig(items_per_prompt=8, max_series_points=200)
        totals = UsageTotals()
        items = review_items(8, points=200)
        for _ in range(templates):  # one template judged again by each run: the same items part, criterion after criterion
            verifier = JudgePanelVerifier(judges, panel, task="levels", dataset="levels",
                                          retry=retry_policy(settings))
            totals = totals.add(asyncio.run(verifier("source", _report(items))).usage)
        return _measure(fake, totals, templates=templates)
