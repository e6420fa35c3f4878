"""`audit_template`: draw items from a template through the sandbox, then `audit_items`.

Seeds and sample sizes come from the OS (`secrets`), so a template cannot predict them; they are
recorded in the report (pass them back as `plan` to reproduce an audit). The first seed is also
run at two smaller sizes (5, the size checks used to run, and half its size) and at twice its
size where the output limit allows, so an item drawn under several sizes must keep its key; the half-size run is repeated in another sandbox process
and must give identical items (determinism across processes). A blind solver that wins is tested
again with as many fresh seeds added (`confirm_rejection`): a sound template's chance win seldom
repeats, a real cue does; while the pooled gain straddles the bar (`undecided`), another round of
fresh seeds is added, up to `confirmation_rounds`. A `SandboxPool` of several workers runs the draws at once. Template code
only ever runs in the sandbox.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox import RunResult, SandboxLimits, SandboxPool, SandboxSettings, run_template
from itemsmith.verification.audit.core import audit_items, confirm_rejection, undecided
from itemsmith.verification.audit.fidelity import named_record_ids
from itemsmith.verification.audit.models import AuditReport, Finding, ItemDraw
from itemsmith.verification.audit.record_data import fetch_record_data
from itemsmith.verification.seeds import fresh_seed, fresh_size
from itemsmith.verification.settings import AuditConfig, VerificationSettings

__all__ = ["audit_template", "plan_draws"]

# The num_samples checks have always used: the first seed is also run at it, so a template
# keyed differently there than at other sizes shows the same item with two keys.
CHECKED_SIZE = 5


def plan_draws(config: AuditConfig) -> list[tuple[int, int]]:
    """(seed, num_samples) pairs: `config.seeds` fresh seeds, sizes random around
    items/seeds so they sum to about `config.items`."""
    base = max(2, config.items // config.seeds)
    low, high = max(1, base // 2), base + base // 2
    return [(fresh_seed(), fresh_size(low, high)) for _ in range(config.seeds)]


def _canonical(raw: list[dict[str, Any]]) -> str:
    return json.dumps(raw, sort_keys=True, separators=(",", ":"))


def audit_template(source: str, handler: str, *, config: AuditConfig | None = None,
                   pool: SandboxPool | None = None, limits: SandboxLimits | None = None,
                   plan: Sequence[tuple[int, int]] | None = None,
                   confirmation_plan: Sequence[tuple[int, int]] | None = None) -> AuditReport:
    """Audit a template against `handler` (built-in name or handler file) through the sandbox.

    Pass `pool` to reuse one (its handler must match). `plan` fixes the (seed, num_samples) runs
    (at least two; default: drawn from the OS) to reproduce a recorded audit, `confirmation_plan` the
    runs drawn when a blind solver wins (default: as many fresh ones as `plan_draws` gives; the
    report's `confirmation_seeds` and `confirmation_sizes`). Never raises for
    what the template does: a run that fails gives a failed report whose `error` says which run
    and why.
    """
    started = time.monotonic()
    config = config or VerificationSettings().audit
    if plan is not None and len(plan) < 2:
        raise ValueError("an audit plan needs at least two (seed, num_samples) runs")

    def run_source(text: str, seed: int, size: int) -> RunResult:
        if pool is not None:
            return pool.run(text, num_samples=size, seed=seed, limits=limits)
        return run_template(text, handler, num_samples=size, seed=seed, limits=limits)

    def run(seed: int, size: int) -> RunResult:
        return run_source(source, seed, size)

    def run_all(seeds_sizes: Sequence[tuple[int, int]]) -> list[RunResult]:
        workers = max(1, min(len(seeds_sizes), pool.size if pool is not None else 1))
        with ThreadPoolExecutor(max_workers=workers) as executor:  # a pool of several workers runs them at once
            return list(executor.map(lambda seed_size: run(*seed_size), seeds_sizes))

    plan = list(plan) if plan is not None else plan_draws(config)
    first_seed, first_size = plan[0]
    smaller = sorted({n for n in (CHECKED_SIZE, max(1, first_size // 2)) if n != first_size})
    draws: list[ItemDraw] = []
    raw_by_run: dict[tuple[int, int], str] = {}
    results = [run(*plan[0])]  # alone first: a template that fails fails fast
    resized = [*smaller, *_larger(first_size, results[0], limits or getattr(pool, "limits", None) or SandboxSettings().sandbox)]
    runs = [*plan, *((first_seed, n) for n in resized)]
    if results[0].status is RunStatus.ok:
        results += run_all(runs[1:])
    for (seed, size), result in zip(runs, results, strict=False):
        if (error := _run_error(seed, size, result)) is not None:
            return _failed(config, plan, started, error)
        raw_by_run[(seed, size)] = _canonical(result.items)
        draws.append(_draw(seed, size, result))

    check_seed, check_size = (first_seed, max(smaller)) if smaller else plan[1]
    named = sorted({rid for draw in draws for item in draw.items for rid in named_record_ids(item)})
    # the second-process run and the read of the records the items name (for data fidelity) at once
    with ThreadPoolExecutor(max_workers=2 if pool is not None and pool.size > 1 else 1) as executor:
        rerun = executor.submit(run, check_seed, check_size)
        fetched = executor.submit(fetch_record_data, lambda text: run_source(text, 0, 1), named)
        again, records = rerun.result(), fetched.result()
    if again.status is RunStatus.ok and _canonical(again.items) == raw_by_run[(check_seed, check_size)]:
        determinism = Finding(check="determinism", passed=True,
                              message=f"seed {check_seed} gave identical items in two sandbox processes")
    else:
        why = again.error if again.status is not RunStatus.ok else "different items"
        determinism = Finding(check="determinism", passed=False,
                              message=f"seed {check_seed} gave {why} in a second sandbox process: draw all randomness "
                                      "from rng (or random / np.random), never from the clock, id(), hash() or "
                                      "anything else that differs between processes")

    report = audit_items(draws, config, records)
    if not report.passed and report.error is None:  # it must fail again with fresh seeds added
        if confirmation_plan is not None:  # a recorded audit's, replayed: every round at once
            confirm = list(confirmation_plan)
        else:  # fresh seeds, the first also at the first seed's other sizes: a key wrong only at larger
            fresh = plan_draws(config)  # num_samples shows again
            confirm = [*fresh, *((fresh[0][0], n) for n in resized)]
        more: list[ItemDraw] = []
        confirmed = report
        for round_number in range(1 if confirmation_plan is not None else config.confirmation_rounds):
            if round_number:  # the pooled gain straddled the bar: judge it on more items
                confirm = plan_draws(config)
            for (seed, size), result in zip(confirm, run_all(confirm), strict=True):
                if (error := _run_error(seed, size, result)) is not None:
                    return _failed(config, plan, started, error)
                more.append(_draw(seed, size, result))
            confirmed = confirm_rejection(report, draws, more, config)
            if not undecided(report, confirmed, config):
                break
        report = confirmed
    findings = [*report.findings, determinism]
    feedback = report.feedback
    if not determinism.passed:
        feedback = (feedback + "\n" if feedback else "The item audit failed:\n") + f"- determinism: {determinism.message}"
    return report.model_copy(update={
        "findings": findings, "passed": report.passed and determinism.passed, "feedback": feedback,
        "elapsed_ms": (time.monotonic() - started) * 1000,
    })


def _run_error(seed: int, size: int, result: RunResult) -> str | None:
    if result.status is not RunStatus.ok:
        return f"the run with seed {seed} and num_samples {size} failed ({result.status.value}): {result.error}"
    if len(result.items) != size:
        return f"question({size}) returned {len(result.items)} items; it must return exactly num_samples items"
    return None


def _draw(seed: int, size: int, result: RunResult) -> ItemDraw:
    return ItemDraw(seed=seed, num_samples=size, items=[Item.model_validate(i) for i in result.items])


def _larger(size: int, first: RunResult, limits: SandboxLimits) -> list[int]:
    """Twice the first run's size, where its output would stay within half the output limit: a template
    keyed right at the sizes checks use and wrong at larger ones shows the same item with two keys,
    or keys that are not the asked statistic. None when the first run failed or its items are large."""
    if first.status is not RunStatus.ok or not first.items:
        return []
    # the sandbox counts every number as 24 bytes against its output limit, whatever its JSON length
    numbers = sum(len(channel.get("values", ())) for item in first.items for channel in item.get("series", ()))
    per_item = (len(_canonical(first.items).encode("utf-8")) + 24 * numbers) / len(first.items)
    larger = min(2 * size, int(limits.output_bytes / 2 / per_item), limits.max_samples)
    return [larger] if larger > size else []


def _failed(config: AuditConfig, plan: list[tuple[int, int]], started: float, error: str) -> AuditReport:
    return AuditReport(passed=False, error=error, feedback=f"The item audit could not draw items: {error}",
                       seeds=[s for s, _ in plan], sizes=[n for _, n in plan], alpha=config.alpha,
                       thresholds_lowered=config.lowered(), elapsed_ms=(time.monotonic() - started) * 1000)
