"""How often the capability filter discards a template when the whole student pool guesses, and how
often it still sees a pool whose accuracy rises with capability; and how the ladder's separation
(`verification.capability.ladder_auc`, what validates a local ladder at 0.7) reads each pool.

    python benchmarks/capability_null.py [--runs 2000] [--items 20] [--templates 4 10]

Three students of ranks 1 to 3 answer `--items` four-option items; each answer is right with the
student's probability (all 0.25: the null; 0.25/0.45/0.65: a rising pool). Prints the outcomes of
`verification.capability.assess` over `--runs` simulated templates, then, per pool and per number of
templates a ladder is measured on, the mean ladder AUC over `--runs` measurements and the share that
reaches 0.7 (seeded: the same numbers each run).
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from itemsmith.items.schema import StudentResponse
from itemsmith.verification.capability import assess, ladder_auc
from itemsmith.verification.students import StudentReport

VALIDATED = 0.7  # AgentSettings.min_ladder_auc
POOLS = {"all at chance": (0.25, 0.25, 0.25), "rising 0.25/0.45/0.65": (0.25, 0.45, 0.65)}


def simulated(rng: np.random.Generator, accuracy: tuple[float, ...], items: int) -> StudentReport:
    responses = [StudentResponse(student=f"rank{rank}", rank=rank, item_index=i, raw="Answer: A", choice=0,
                                 correct=bool(rng.random() < p))
                 for rank, p in enumerate(accuracy, start=1) for i in range(items)]
    return StudentReport(template_id="simulated", responses=responses, chance=0.25, n_items=items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--templates", type=int, nargs="+", default=[4, 10])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for name, accuracy in POOLS.items():
        outcomes = Counter(assess(simulated(rng, accuracy, args.items)).outcome.value for _ in range(args.runs))
        shares = ", ".join(f"{outcome} {count / args.runs:.2%}" for outcome, count in outcomes.most_common())
        print(f"{name}: {shares}")
    for name, accuracy in POOLS.items():
        for templates in args.templates:
            aucs = [ladder_auc([simulated(rng, accuracy, args.items) for _ in range(templates)])[0] or 0.0
                    for _ in range(args.runs)]
            print(f"{name}, ladder AUC on {templates} templates: mean {np.mean(aucs):.3f}, "
                  f">= {VALIDATED} {np.mean(np.array(aucs) >= VALIDATED):.2%}")


if __name__ == "__main__":
    main()
