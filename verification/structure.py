"""The structure check: does a template compile, run, and produce valid, seeded, varied items?

Three sandboxed runs, each in a fresh sandbox process: seed S (items validated against the
schema), seed S again (same items: deterministic across processes) and another seed T (not all
the same items: the seed matters). S, T and num_samples are drawn from the OS per check unless
given (a template cannot tune itself to the checked seeds) and recorded in the report. The
report's `error` is one short line for a generator LLM: the exception, its message and the
template's own line; never a sandbox internal.
"""

from __future__ import annotations

import json
import time
from typing import Any

from itemsmith.items.schema import Item, RunStatus, StructureReport
from itemsmith.sandbox import RunResult, SandboxLimits, SandboxPool, run_template
from itemsmith.verification.seeds import fresh_seed, fresh_size

# num_samples drawn per check when none is given
SIZE_RANGE = (4, 12)


def _canonical(items: list[dict[str, Any]]) -> str:
    return json.dumps(items, sort_keys=True, separators=(",", ":"))


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> str:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            fields = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            return f"item {index} differs in {', '.join(fields) or 'content'}"
    return "the number of items differs"


def check_structure(source: str, handler: str, *, num_samples: int | None = None, seed: int | None = None,
                    limits: SandboxLimits | None = None, pool: SandboxPool | None = None) -> StructureReport:
    """Run the structure check on a template against `handler` (built-in name or handler file).

    `seed` / `num_samples` None (the default): drawn from the OS for this check. Every run goes
    through the sandbox; pass `pool` to reuse one (its handler must match).
    """
    started = time.monotonic()
    seed = fresh_seed() if seed is None else seed
    num_samples = fresh_size(*SIZE_RANGE) if num_samples is None else num_samples
    other_seed = fresh_seed()
    while other_seed == seed:
        other_seed = fresh_seed()
    seeds = [seed]

    def run(run_seed: int) -> RunResult:
        if pool is not None:
            return pool.run(source, num_samples=num_samples, seed=run_seed, limits=limits)
        return run_template(source, handler, num_samples=num_samples, seed=run_seed, limits=limits)

    def report(result: RunResult, **extra: Any) -> StructureReport:
        fields: dict[str, Any] = {
            "status": result.status, "error": result.error, "traceback_tail": result.traceback_tail,
            "elapsed_ms": (time.monotonic() - started) * 1000, "seeds": list(seeds), "num_samples": num_samples,
        }
        fields.update(extra)
        return StructureReport(**fields)

    first = run(seed)
    if first.status is not RunStatus.ok:
        return report(first)
    items = [Item.model_validate(raw) for raw in first.items]

    again = run(seed)
    if again.status is not RunStatus.ok:
        return report(again, error=f"second run with the same seed failed: {again.error}", deterministic=False)
    if _canonical(again.items) != _canonical(first.items):
        detail = _first_difference(first.items, again.items)
        return report(first.model_copy(update={"status": RunStatus.rejected}), items=items, deterministic=False,
                      error=f"not deterministic: seed {seed} gave different items in a second sandbox process "
                            f"({detail}); draw all randomness from rng (or random / np.random), never from the "
                            "clock, id(), hash() of objects or anything else that differs between processes")

    seeds.append(other_seed)
    other = run(other_seed)
    if other.status is not RunStatus.ok:
        return report(other, error=f"run with seed {other_seed} failed: {other.error}", items=items,
                      deterministic=True)
    varied = _canonical(other.items) != _canonical(first.items)
    if num_samples > 1 and len({_canonical([i]) for i in first.items}) == 1:
        varied = False
    if not varied:
        return report(first.model_copy(update={"status": RunStatus.rejected}), items=items, deterministic=True,
                      varied=False,
                      error=f"no variety: seeds {seed} and {other_seed} gave identical items (or all {num_samples} "
                            "items are the same); draw the series, record or numbers from rng")
    return report(first, items=items, deterministic=True, varied=True, error=None)
