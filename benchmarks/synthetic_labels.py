"""Independent-statistic key agreement per synthetic family, before and after the realization check.

For every (generator, kind) of `itemsmith.handlers.synthetic`, draws `--seeds` series (lengths
spread from the generator's minimum to 300, as in tests/handlers/test_synthetic_labels.py) and
re-answers each label with that test module's textbook statistics (statsmodels / scipy: OLS,
periodogram, ADF, Ljung-Box, Granger F-test, ...), which share no code with the generators.

- "before": raw draws, the realization check switched off (`UNCHECKED` generators);
- "after": the generators as templates call them (each realization accepted only when the
  generator's own check, a separate numpy/scipy statistic with a margin, agrees with its label);
- each at the test's level (alpha = 0.001: effects significant below it, absent effects
  above it) and at alpha = 0.01 (absent effects must look absent even at 1%);
- "acceptance": the share of raw draws the realization check accepts (1 / mean draws per series).

Run by hand (needs the dev extra for statsmodels):
    python benchmarks/synthetic_labels.py --seeds 1000
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import itemsmith.handlers.synthetic as syn

ROOT = Path(__file__).resolve().parent.parent


def _independent_checks() -> ModuleType:
    """The label test module: its CHECKS use statsmodels / scipy statistics and no generator
    code; its STRICT is the significance level of every check."""
    path = ROOT / "tests" / "handlers" / "test_synthetic_labels.py"
    spec = importlib.util.spec_from_file_location("synthetic_label_checks", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _agrees(module: ModuleType, level: float, name: str, made: syn.Synthetic) -> bool:
    module.STRICT = level
    return bool(module.CHECKS[name](made.values, made.labels))


def _length(name: str, i: int) -> int:
    low = syn.MIN_LENGTH[name]
    return int(low + (300 - low) * (i % 4) / 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--only", default="", help="comma-separated generator names")
    args = parser.parse_args()
    module = _independent_checks()
    only = set(filter(None, args.only.split(",")))
    print("| generator | kind | before a=.001 | after a=.001 | before a=.01 | after a=.01 | acceptance "
          "| ms/series (after) |")
    print("|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for name in syn.GENERATORS:
        if only and name not in only:
            continue
        for kind in syn.KINDS.get(name, (None,)):
            kwargs = {} if kind is None else {"direction" if name == "granger_pair" else "kind": kind}
            hits = dict.fromkeys(("before", "after", "before01", "after01", "accepted"), 0)
            elapsed = 0.0
            for seed in range(args.seeds):
                length = _length(name, seed)
                raw = syn.UNCHECKED[name](seed, length, **kwargs)
                check = syn.CHECKS.get(name)
                hits["accepted"] += check is None or bool(check(raw.values, raw.labels))
                hits["before"] += _agrees(module, 1e-3, name, raw)
                hits["before01"] += _agrees(module, 1e-2, name, raw)
                start = time.perf_counter()
                made = syn.GENERATORS[name](seed, length, **kwargs)
                elapsed += time.perf_counter() - start
                hits["after"] += _agrees(module, 1e-3, name, made)
                hits["after01"] += _agrees(module, 1e-2, name, made)
            rate = {key: value / args.seeds for key, value in hits.items()}
            worst = min(worst, rate["after"])
            print(f"| {name} | {kind or '-'} | {rate['before']:.1%} | {rate['after']:.1%} | {rate['before01']:.1%} "
                  f"| {rate['after01']:.1%} | {rate['accepted']:.1%} | {1000 * elapsed / args.seeds:.1f} |",
                  flush=True)
    print(f"\nworst 'after' agreement at alpha=0.001: {worst:.2%} over {args.seeds} seeds per row", file=sys.stderr)


if __name__ == "__main__":
    main()
