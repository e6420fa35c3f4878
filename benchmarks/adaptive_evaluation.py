"""Benchmark: adaptive evaluation vs random order vs the full release, on simulated respondents.

A bank of ``--templates`` templates with known 2PL parameters (a ~ lognormal(0, 0.4), b ~ N(0, 1),
``--instances`` instances each in the full release) and ``--respondents`` respondents with
abilities ~ N(0, 1). Each respondent is evaluated

- in full: every instance of every template, EAP ability (`verification.irt.estimate_ability`);
- adaptively (`templates_bank.adaptive.run_adaptive`: Fisher information, randomesque top-k);
- in random order (the same loop with top_k = every template: information ignored),

both stopping at SE <= ``--target-se`` (or ``--max-items``). Every instance of a template is an
independent draw from the template's 2PL, as the model assumes. Reports the items each needs,
the ratio, how far the adaptive run's predicted full-release accuracy is from the accuracy the
full evaluation observed (mean absolute error), and Spearman rank correlations of the abilities with the full evaluation's and with
the true ones; with ``--calibrate`` the loops use parameters fitted on a separate calibration
sample of ``--calibration-students`` simulated students (the realistic case) instead of the true ones.

    python benchmarks/adaptive_evaluation.py --templates 200 --instances 5 --respondents 200
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from itemsmith.templates_bank.adaptive import AdaptiveConfig, Administered, CalibratedItem, run_adaptive
from itemsmith.templates_bank.items.schema import IRTParameters
from itemsmith.verification.irt import estimate_ability, fit_2pl


def _p(theta: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a * (theta - b)))


def _respondent(theta: float, a: np.ndarray, b: np.ndarray,
                rng: np.random.Generator) -> Callable[[int, int], Administered]:
    """A simulated respondent: each answer to a template an independent 2PL draw."""
    def respond(index: int, use: int) -> Administered:
        return Administered(correct=bool(rng.random() < _p(theta, a[index], b[index])))
    return respond


def _calibrated(a: np.ndarray, b: np.ndarray, students: int, instances: int, rng: np.random.Generator):
    theta = rng.normal(0.0, 1.0, students)
    correct = rng.random((students, a.size, instances)) < _p(theta[:, None, None], a[None, :, None], b[None, :, None])
    s, t, r = np.meshgrid(np.arange(students), np.arange(a.size), np.arange(instances), indexing="ij")
    frame = pd.DataFrame({"template_id": [f"t{j:04d}" for j in t.ravel()], "student": s.ravel().astype(str),
                          "instance": r.ravel(), "correct": correct.ravel().astype(int)})
    table = fit_2pl(frame).templates
    return (table.loc[[f"t{j:04d}" for j in range(a.size)], "discrimination"].to_numpy(),
            table.loc[[f"t{j:04d}" for j in range(a.size)], "difficulty"].to_numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", type=int, default=200)
    parser.add_argument("--instances", type=int, default=5, help="instances per template in the full release")
    parser.add_argument("--respondents", type=int, default=200)
    parser.add_argument("--target-se", type=float, default=0.3)
    parser.add_argument("--max-items", type=int, default=500)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--max-uses", type=int, default=1, help="instances of one template an adaptive run may ask")
    parser.add_argument("--calibrate", action="store_true", help="use parameters fitted on a calibration sample")
    parser.add_argument("--calibration-students", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    a, b = rng.lognormal(0.0, 0.4, args.templates), rng.normal(0.0, 1.0, args.templates)
    used_a, used_b = (_calibrated(a, b, args.calibration_students, args.instances, rng) if args.calibrate else (a, b))
    items = [CalibratedItem(f"t{j:04d}", float(used_a[j]), float(used_b[j]), float(args.instances))
             for j in range(args.templates)]
    parameters = {i.template_id: IRTParameters(discrimination=i.discrimination, difficulty=i.difficulty,
                                               discrimination_se=0.0, difficulty_se=0.0) for i in items}
    truth = rng.normal(0.0, 1.0, args.respondents)
    full, adaptive, random_order, adaptive_items, random_items, stops = [], [], [], [], [], {}
    accuracy_error = []
    started = time.perf_counter()
    for r, theta in enumerate(truth):
        answers = np.random.default_rng([args.seed, r])
        correct = answers.random((args.templates, args.instances)) < _p(theta, a, b)[:, None]
        frame = pd.DataFrame({"template_id": np.repeat([i.template_id for i in items], args.instances),
                              "correct": correct.ravel().astype(int)})
        full.append(estimate_ability(frame, parameters)[0])

        respond = _respondent(theta, a, b, np.random.default_rng([args.seed, r, 1]))

        common = {"target_se": args.target_se, "max_items": args.max_items, "max_uses": args.max_uses,
                  "seed": args.seed * 100_003 + r}
        fast = run_adaptive(items, respond, AdaptiveConfig(top_k=args.top_k, **common))
        slow = run_adaptive(items, respond, AdaptiveConfig(top_k=args.templates, **common))
        adaptive.append(fast.theta)
        accuracy_error.append(abs(fast.predicted_accuracy - float(correct.mean())))
        random_order.append(slow.theta)
        adaptive_items.append(fast.items_used)
        random_items.append(slow.items_used)
        stops[fast.stopped] = stops.get(fast.stopped, 0) + 1
    elapsed = time.perf_counter() - started
    full_items = args.templates * args.instances
    result = {
        "templates": args.templates, "instances": args.instances, "respondents": args.respondents,
        "parameters": "calibrated" if args.calibrate else "true", "target_se": args.target_se, "top_k": args.top_k,
        "max_uses": args.max_uses, "full_items": full_items,
        "adaptive_items_mean": float(np.mean(adaptive_items)), "adaptive_items_median": float(np.median(adaptive_items)),
        "random_items_mean": float(np.mean(random_items)), "random_items_median": float(np.median(random_items)),
        "random_over_adaptive": float(np.mean(random_items) / np.mean(adaptive_items)),
        "full_over_adaptive": float(full_items / np.mean(adaptive_items)),
        "adaptive_stops": stops,
        "predicted_accuracy_mae": float(np.mean(accuracy_error)),
        "spearman_adaptive_vs_full": float(spearmanr(adaptive, full).statistic),
        "spearman_random_vs_full": float(spearmanr(random_order, full).statistic),
        "spearman_adaptive_vs_true": float(spearmanr(adaptive, truth).statistic),
        "spearman_full_vs_true": float(spearmanr(full, truth).statistic),
        "seconds": round(elapsed, 1),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
