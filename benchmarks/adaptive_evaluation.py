"""Benchmark: adaptive evaluation vs random order vs the full release, on simulated respondents.

A bank of ``--templates`` templates with known 2PL parameters, ``--instances`` instances each in
the full release, and ``--respondents`` respondents with abilities ~ N(0, 1). Two banks:

- ``--bank prior`` (default): parameters drawn from the calibration's own priors
  (`verification.irt`: log a ~ N(0, 0.5^2), b ~ N(0, 2^2)): templates of every difficulty,
  some easy or hard for the whole population, discriminations spread as calibration expects;
- ``--bank narrow``: a ~ lognormal(0, 0.4), b ~ N(0, 1): difficulties bunched at the
  respondents' abilities, which is the friendliest case for random order.

Each respondent is evaluated

- in full: every instance of every template, EAP ability (`verification.irt.estimate_ability`);
- adaptively (`templates_bank.adaptive.run_adaptive` with its default configuration: Fisher
  information, 5-4-3-2-1 exposure control, a template asked at most ``max_uses`` times, each
  time a fresh instance);
- in random order: the same loop, the same estimator, prior, stopping rule and ``max_uses``,
  with the template drawn uniformly among those left (randomesque over every template),

both stopping at SE <= each ``--target-se`` (or ``--max-items``). Every instance of a template
is an independent draw from the template's 2PL, as the model assumes; ``--template-effect TAU``
breaks that assumption: each respondent gets a logit offset ~ N(0, TAU^2) per template, shared
by all instances of that template (the full evaluation's too), so repeated fresh instances of
a template tell less than the model believes. Reports per SE target the items each needs, the
ratio, the items an oracle would need (knowing the true ability: the most informative
templates at it, up to ``max_uses`` each, until the Fisher information reaches 1/SE^2 - 1: a
ceiling no selection rule can beat), how far the adaptive run's predicted full-release accuracy
is from the accuracy the full evaluation observed (mean absolute error), and Spearman rank
correlations of the abilities with the full evaluation's and with the true ones; with
``--calibrate`` the loops use parameters fitted on a separate calibration sample of
``--calibration-students`` simulated students (the realistic case) instead of the true ones.

    python benchmarks/adaptive_evaluation.py --target-se 0.3 0.25
    python benchmarks/adaptive_evaluation.py --bank narrow --target-se 0.3 0.25
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from itemsmith.items.schema import IRTParameters
from itemsmith.templates_bank.adaptive import AdaptiveConfig, Administered, CalibratedItem, run_adaptive
from itemsmith.verification.irt import IRTConfig, estimate_ability, fisher_information, fit_2pl


def _p(theta: float, a: np.ndarray, b: np.ndarray, offset: np.ndarray | float = 0.0) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(a * (theta - b) + offset)))


def _respondent(theta: float, a: np.ndarray, b: np.ndarray, offset: np.ndarray,
                rng: np.random.Generator) -> Callable[[int, int], Administered]:
    """A simulated respondent: each answer to an instance of a template an independent draw from
    the template's 2PL, shifted by the respondent's offset for that template."""
    def respond(index: int, use: int) -> Administered:
        return Administered(correct=bool(rng.random() < _p(theta, a[index], b[index], offset[index])))
    return respond


def _bank(kind: str, templates: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "narrow":
        return rng.lognormal(0.0, 0.4, templates), rng.normal(0.0, 1.0, templates)
    prior = IRTConfig()
    return (rng.lognormal(prior.log_discrimination_mean, prior.log_discrimination_sd, templates),
            rng.normal(prior.difficulty_mean, prior.difficulty_sd, templates))


def _oracle_items(theta: float, a: np.ndarray, b: np.ndarray, max_uses: int, target_se: float) -> int:
    """Items needed by a selection that knows the true ability: the most informative templates
    at it, each up to ``max_uses`` times, until prior plus Fisher information reaches 1/SE^2."""
    information = np.sort(np.repeat(fisher_information(theta, a, b), max_uses))[::-1]
    total = 1.0 + np.cumsum(information)
    reached = np.flatnonzero(total >= 1.0 / target_se**2)
    return int(reached[0]) + 1 if reached.size else information.size


def _calibrated(a: np.ndarray, b: np.ndarray, students: int, instances: int, rng: np.random.Generator):
    theta = rng.normal(0.0, 1.0, students)
    correct = rng.random((students, a.size, instances)) < _p(theta[:, None, None], a[None, :, None], b[None, :, None])
    s, t, r = np.meshgrid(np.arange(students), np.arange(a.size), np.arange(instances), indexing="ij")
    frame = pd.DataFrame({"template_id": [f"t{j:04d}" for j in t.ravel()], "student": s.ravel().astype(str),
                          "instance": r.ravel(), "correct": correct.ravel().astype(int)})
    table = fit_2pl(frame).templates
    return (table.loc[[f"t{j:04d}" for j in range(a.size)], "discrimination"].to_numpy(),
            table.loc[[f"t{j:04d}" for j in range(a.size)], "difficulty"].to_numpy())


def _spearman(x: list[float], y: list[float] | np.ndarray) -> float:
    return float(spearmanr(x, y).statistic)


def main() -> None:
    defaults = AdaptiveConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bank", choices=["prior", "narrow"], default="prior")
    parser.add_argument("--templates", type=int, default=200)
    parser.add_argument("--instances", type=int, default=5, help="instances per template in the full release")
    parser.add_argument("--respondents", type=int, default=200)
    parser.add_argument("--target-se", type=float, nargs="+", default=[defaults.target_se])
    parser.add_argument("--max-items", type=int, default=500)
    parser.add_argument("--top-k", type=int, default=defaults.top_k)
    parser.add_argument("--exposure", choices=["shrinking", "randomesque"], default=defaults.exposure)
    parser.add_argument("--max-uses", type=int, default=defaults.max_uses,
                        help="fresh instances of one template a run may ask (both orders)")
    parser.add_argument("--template-effect", type=float, default=0.0,
                        help="SD of a respondent-by-template logit offset shared by the template's instances")
    parser.add_argument("--calibrate", action="store_true", help="use parameters fitted on a calibration sample")
    parser.add_argument("--calibration-students", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    a, b = _bank(args.bank, args.templates, rng)
    used_a, used_b = (_calibrated(a, b, args.calibration_students, args.instances, rng) if args.calibrate else (a, b))
    items = [CalibratedItem(f"t{j:04d}", float(used_a[j]), float(used_b[j]), float(args.instances))
             for j in range(args.templates)]
    parameters = {i.template_id: IRTParameters(discrimination=i.discrimination, difficulty=i.difficulty,
                                               discrimination_se=0.0, difficulty_se=0.0) for i in items}
    truth = rng.normal(0.0, 1.0, args.respondents)
    offsets = rng.normal(0.0, 1.0, (args.respondents, args.templates)) * args.template_effect
    full, observed = [], []
    started = time.perf_counter()
    for r, theta in enumerate(truth):
        answers = np.random.default_rng([args.seed, r])
        correct = answers.random((args.templates, args.instances)) < _p(theta, a, b, offsets[r])[:, None]
        frame = pd.DataFrame({"template_id": np.repeat([i.template_id for i in items], args.instances),
                              "correct": correct.ravel().astype(int)})
        full.append(estimate_ability(frame, parameters)[0])
        observed.append(float(correct.mean()))
    full_items = args.templates * args.instances
    results = []
    for target_se in args.target_se:
        adaptive, random_order, adaptive_items, random_items, oracle_items = [], [], [], [], []
        stops: dict[str, int] = {}
        accuracy_error = []
        for r, theta in enumerate(truth):
            common = {"target_se": target_se, "max_items": args.max_items, "max_uses": args.max_uses,
                      "seed": args.seed * 100_003 + r}
            fast = run_adaptive(items, _respondent(theta, a, b, offsets[r], np.random.default_rng([args.seed, r, 1])),
                                AdaptiveConfig(top_k=args.top_k, exposure=args.exposure, **common))
            slow = run_adaptive(items, _respondent(theta, a, b, offsets[r], np.random.default_rng([args.seed, r, 2])),
                                AdaptiveConfig(top_k=args.templates, exposure="randomesque", **common))
            adaptive.append(fast.theta)
            random_order.append(slow.theta)
            adaptive_items.append(fast.items_used)
            random_items.append(slow.items_used)
            oracle_items.append(_oracle_items(theta, a, b, args.max_uses, target_se))
            accuracy_error.append(abs(fast.predicted_accuracy - observed[r]))
            stops[fast.stopped] = stops.get(fast.stopped, 0) + 1
        results.append({
            "target_se": target_se,
            "adaptive_items_mean": float(np.mean(adaptive_items)),
            "adaptive_items_median": float(np.median(adaptive_items)),
            "random_items_mean": float(np.mean(random_items)),
            "random_items_median": float(np.median(random_items)),
            "oracle_items_mean": float(np.mean(oracle_items)),
            "random_over_adaptive": float(np.mean(random_items) / np.mean(adaptive_items)),
            "random_over_oracle": float(np.mean(random_items) / np.mean(oracle_items)),
            "full_over_adaptive": float(full_items / np.mean(adaptive_items)),
            "adaptive_stops": stops,
            "predicted_accuracy_mae": float(np.mean(accuracy_error)),
            "spearman_adaptive_vs_full": _spearman(adaptive, full),
            "spearman_random_vs_full": _spearman(random_order, full),
            "spearman_adaptive_vs_true": _spearman(adaptive, truth),
            "spearman_random_vs_true": _spearman(random_order, truth),
        })
    summary = {
        "bank": args.bank, "templates": args.templates, "instances": args.instances,
        "respondents": args.respondents, "parameters": "calibrated" if args.calibrate else "true",
        "top_k": args.top_k, "exposure": args.exposure, "max_uses": args.max_uses,
        "template_effect": args.template_effect, "full_items": full_items,
        "spearman_full_vs_true": _spearman(full, truth), "results": results,
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
