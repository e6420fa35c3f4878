"""Independent re-answering of the curated bank: per template, how often an independent solver
(tests/templates_bank/curated_solvers.py; the older per-folder checks where it has none) gives
the keyed answer, the share of distinct question texts, and for the cues a held-out audit of
the bank found, the leave-one-seed-out accuracy of a blind rule against chance.

Run by hand (the whole bank takes several minutes on 2 cores):
    python benchmarks/curated_independent.py                         # every template, 8 seeds x 30 items
    python benchmarks/curated_independent.py exam_period glucose_hypo_tf --seeds 8 --samples 60
    python benchmarks/curated_independent.py --source-dir /tmp/old   # other sources (e.g. an older commit's
                                                                      # templates_bank/curated), same names
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

from itemsmith.sandbox.executor import run_template
from itemsmith.templates_bank.curated import CURATED_DIR, load_curated

SOLVERS_PATH = Path(__file__).resolve().parents[1] / "tests" / "templates_bank" / "curated_solvers.py"
# the ECG templates return long series: fewer items per call keeps a call's output under the sandbox's limit
MAX_SAMPLES = {"ecg_heart_rate_estimate": 30, "ecg_beat_count": 30}


def load_solvers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("curated_solvers", SOLVERS_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def draw(template_id: str, source: str, handler: str, seeds: int, samples: int) -> dict[int, list[dict]]:
    """seed -> items; seeds are 1000..1000+seeds-1 (none of the older tests' seeds)."""
    per_call = min(samples, MAX_SAMPLES.get(template_id, samples))
    out: dict[int, list[dict]] = {}
    for seed in range(1000, 1000 + seeds):
        result = run_template(source, handler, num_samples=per_call, seed=seed)
        if result.status.value != "ok":
            raise RuntimeError(f"{template_id} seed {seed}: {result.error}")
        out[seed] = list(result.items)
    return out


def agreement(solvers: ModuleType, template_id: str, items: list[dict]) -> float:
    def agrees(item: dict) -> bool:
        try:
            return solvers.agrees(template_id, item)
        except (KeyError, ValueError, IndexError, AttributeError, TypeError):  # cannot read the item: disagrees
            return False
    return sum(agrees(i) for i in items) / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("templates", nargs="*")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--samples", type=int, default=30, help="items per seed")
    parser.add_argument("--source-dir", type=Path, help="read <dir>/<folder>/<id>.py instead of the bank's sources")
    args = parser.parse_args()
    solvers = load_solvers()
    families: dict[str, list[float]] = defaultdict(list)
    started = time.monotonic()
    print("| template | items | agreement | solver | distinct questions | blind rule: accuracy / chance |")
    print("|---|---|---|---|---|---|")
    for template_id, template in load_curated().items():
        if args.templates and template_id not in args.templates:
            continue
        source = template.source
        if args.source_dir:
            (path,) = (args.source_dir / p.relative_to(CURATED_DIR) for p in CURATED_DIR.glob(f"*/{template_id}.py"))
            source = path.read_text()
        by_seed = draw(template_id, source, template.handler, args.seeds, args.samples)
        items = [i for its in by_seed.values() for i in its]
        agree = agreement(solvers, template_id, items)
        families[template.concepts[0]].append(agree)
        blind = ""
        if template_id in solvers.BLIND_RULES:
            accuracy, chance, n = solvers.blind_accuracy(solvers.BLIND_RULES[template_id], by_seed)
            flag = " (beats chance)" if solvers.beats_chance(accuracy, chance, n) else ""
            blind = f"{accuracy:.3f} / {chance:.3f}{flag}"
        kind = "new" if template_id in solvers.SOLVERS else "older check"
        distinct = len({i["question"] for i in items}) / len(items)
        print(f"| {template_id} | {len(items)} | {agree:.3f} | {kind} | {distinct:.2f} | {blind} |", flush=True)
    print("\nfamily (first concept tag): lowest template agreement", file=sys.stderr)
    for family, values in sorted(families.items()):
        print(f"  {family}: {min(values):.3f} over {len(values)} templates", file=sys.stderr)
    print(f"{time.monotonic() - started:.0f} s in all", file=sys.stderr)


if __name__ == "__main__":
    main()
