"""Benchmark: adaptive evaluation on the local student ladder, against random order and the full release.

The real operations of ``itemsmith release evaluate`` / ``release calibrate`` on a fresh SQLite bank:

1. the curated bank, released with ``--seeds`` seeds x ``--samples`` items per template
   (``itemsmith bank import-curated``, ``release create``), keeping the templates whose items
   fit ``--max-prompt-tokens`` in ``--text-format`` (a 2-core CPU reads about 40 prompt tokens a
   second with the 1.5B model, and the whole curated release is 216k tokens an instance in
   ``compact``, 396k in ``plain``: hours per model);
2. every ladder model evaluated on the whole release, its answers stored (``release evaluate``);
3. the release calibrated on those answers (``release calibrate --priors``: three respondents
   are fewer than a calibration needs, so the priors carry much of the fit); the full
   evaluation's ability of each model is its EAP ability on these parameters;
4. every model evaluated on fresh instances to each ``--target-se``, adaptively (Fisher
   information, 5-4-3-2-1 exposure: ``release evaluate --adaptive``) and in random order (the same
   loop, estimator, prior, stopping rule and ``max_uses``, the template drawn uniformly among
   those left), both with the same item budget ``--max-items``.

Reports per model and target: items used, SE reached, why each stopped, abilities, the items each
order needed to reach every SE on the way (``items_to_se``: a small bank and models near chance
may not reach the target within the budget), and over the models the Spearman rank correlation
of the adaptive and the random-order abilities with the full evaluation's (with three models a
correlation is one of -1, -0.5, 0.5, 1: the order of the ladder, read as such). The simulation
half of this benchmark is `benchmarks/adaptive_evaluation.py`.

    python benchmarks/adaptive_ladder.py --samples 2 --max-items 30 --json /tmp/adaptive-ladder.json

Needs the `examples` and `local` extras (the three ladder models). About half an hour on 2 cores
with the defaults, most of it the 1.5B model reading prompts (docs/calibration.md has the numbers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from itemsmith.agents.llm.providers.local import make_letter_scorer
from itemsmith.agents.llm.spec import ModelSpec, StudentSpec
from itemsmith.agents.settings import DEFAULT_LOCAL_STUDENTS, get_settings
from itemsmith.items.rendering import TextFormat
from itemsmith.service.release_operations import evaluate, evaluate_adaptive
from itemsmith.templates_bank.adaptive import AdaptiveConfig
from itemsmith.templates_bank.calibration import CalibrationOptions, calibrate_release, current_parameters
from itemsmith.templates_bank.evaluation import EvaluationStore, release_items
from itemsmith.templates_bank.releases import Release, get_release
from itemsmith.templates_bank.storage import open_session
from itemsmith.verification.irt import estimate_ability
from itemsmith.verification.students import StudentConfig, student_prompt

BANK = "ladder"


def cli(db: str, *args: str) -> str:
    """One ``itemsmith`` command on the benchmark's database (exit code checked)."""
    command = [sys.executable, "-c", "from itemsmith.cli.app import app; app(prog_name='itemsmith')", *args, "--db", db]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def ladder_models(students: Sequence[StudentSpec]) -> list[str]:
    """The model specs of a student ladder."""
    return [str(student.spec) for student in students]


def prompt_tokens(release: Release, model: str, text_format: TextFormat) -> dict[str, int]:
    """The longest student prompt of each template's release items, in `model`'s tokens."""
    scorer = make_letter_scorer(ModelSpec.parse(model), get_settings())
    config = StudentConfig(name=model, rank=0, text_format=text_format)
    longest: dict[str, int] = {}
    for run in release_items(release).runs:
        tokens = max(scorer.count_tokens(student_prompt(item, config)) for item in run.items)
        longest[run.template.template_id] = max(tokens, longest.get(run.template.template_id, 0))
    return longest


def full_abilities(responses: pd.DataFrame, parameters: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """EAP ability +- SE of each model from its full evaluation, on the calibrated parameters."""
    out = {}
    for model, answers in responses.groupby("model"):
        theta, se = estimate_ability(answers[["template_id", "correct"]], parameters)
        out[str(model)] = (float(theta), float(se))
    return out


SE_MARKS = (0.6, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25)


def items_to_se(trajectory: list[list[Any]]) -> dict[str, int | None]:
    """The first step at which the SE was at most each mark (None: not within the run)."""
    return {f"{mark}": next((step for step, (*_, se) in enumerate(trajectory, 1) if se <= mark), None)
            for mark in SE_MARKS}


def spearman(x: list[float], y: list[float]) -> float | None:
    value = float(spearmanr(x, y).statistic)
    return None if np.isnan(value) else round(value, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/itemsmith-adaptive-ladder"))
    parser.add_argument("--models", nargs="+", default=ladder_models(DEFAULT_LOCAL_STUDENTS))
    parser.add_argument("--seeds", type=int, default=1, help="release seeds per template")
    parser.add_argument("--samples", type=int, default=2, help="release items per template and seed")
    parser.add_argument("--text-format", type=TextFormat, default=TextFormat.compact)
    parser.add_argument("--max-prompt-tokens", type=int, default=1000,
                        help="keep the templates whose longest item prompt fits (tokens of the last model)")
    parser.add_argument("--target-se", type=float, nargs="+", default=[0.3])
    parser.add_argument("--max-items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="seed of the adaptive picks and fresh instances")
    parser.add_argument("--json", type=Path, default=None, help="also write the result here")
    args = parser.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    db = f"sqlite:///{args.workdir / 'bank.sqlite'}"
    timings: dict[str, float] = {}
    started = time.perf_counter()
    cli(db, "db", "upgrade")
    cli(db, "bank", "create", BANK, "--handler", "synthetic", "--owner", "bench", "--task", "curated templates")
    cli(db, "bank", "import-curated", BANK, "--reviewer", "bench")
    release_args = ["release", "create", BANK, "--by", "bench", "--seeds", str(args.seeds), "-n", str(args.samples)]
    cli(db, *release_args)
    with open_session(db) as session:
        longest = prompt_tokens(get_release(session, BANK, 1), args.models[-1], args.text_format)
    kept = sorted(t for t, tokens in longest.items() if tokens <= args.max_prompt_tokens)
    cli(db, *release_args, *[a for t in kept for a in ("--template", t)])
    with open_session(db) as session:
        release = get_release(session, BANK, 2)
    timings["release_s"] = round(time.perf_counter() - started, 1)
    print(f"release {release.manifest.ref}: {len(kept)} of {len(longest)} templates fit {args.max_prompt_tokens} "
          f"tokens in {args.text_format.value}, {release.manifest.counts.items} items", file=sys.stderr)

    full: dict[str, dict[str, Any]] = {}
    rows = []
    for model in args.models:
        began = time.perf_counter()
        with open_session(db) as session:
            store = EvaluationStore.open(session, release, f"full-{model.replace(':', '-')}")
            report = evaluate(release, model=ModelSpec.parse(model), formats=[args.text_format], store=store, concurrency=1)
        timings[f"full_{model}_s"] = round(time.perf_counter() - began, 1)
        full[model] = {"accuracy": round(report.overall.accuracy, 3), "items": report.overall.n,
                       "seconds_per_item": round(timings[f"full_{model}_s"] / max(report.overall.n, 1), 2)}
        rows += [{"model": model, "template_id": r.template_id, "correct": int(r.correct)} for r in report.responses]
        print(f"full {model}: accuracy {report.overall.accuracy:.3f} on {report.overall.n} items, "
              f"{timings[f'full_{model}_s']} s", file=sys.stderr)

    began = time.perf_counter()
    with open_session(db) as session:
        calibration = calibrate_release(session, release, CalibrationOptions(priors=True))
        parameters = current_parameters(session, release)
    timings["calibrate_s"] = round(time.perf_counter() - began, 1)
    for model, (theta, se) in full_abilities(pd.DataFrame(rows), parameters).items():
        full[model].update(theta=round(theta, 3), se=round(se, 3))
    discriminations = np.array([p.discrimination for p in parameters.values()])
    print(f"calibrated {len(parameters)} templates: discrimination median {np.median(discriminations):.2f}",
          file=sys.stderr)

    results = []
    for target_se in args.target_se:
        runs: dict[str, dict[str, Any]] = {}
        for order, top_k, exposure in (("adaptive", AdaptiveConfig().top_k, "shrinking"),
                                       ("random", len(parameters), "randomesque")):
            for model in args.models:
                config = AdaptiveConfig(target_se=target_se, max_items=args.max_items, top_k=top_k,
                                        exposure=exposure, seed=args.seed)
                began = time.perf_counter()
                report = evaluate_adaptive(release, model=ModelSpec.parse(model), parameters=parameters, config=config,
                                           text_format=args.text_format)
                runs.setdefault(order, {})[model] = {
                    "theta": round(report.theta, 3), "se": round(report.se, 3), "items": report.items_used,
                    "stopped": report.stopped, "predicted_accuracy": round(report.predicted_accuracy, 3),
                    "seconds": round(time.perf_counter() - began, 1),
                    "trajectory": [[s.template_id, s.correct, round(s.theta, 3), round(s.se, 3)]
                                   for s in report.trajectory]}
                runs[order][model]["items_to_se"] = items_to_se(runs[order][model]["trajectory"])
                print(f"{order} {model} SE {target_se}: {report.items_used} items, theta {report.theta:+.2f} "
                      f"+- {report.se:.2f} ({report.stopped})", file=sys.stderr)
        full_theta = [full[m]["theta"] for m in args.models]
        adaptive_items = np.mean([runs["adaptive"][m]["items"] for m in args.models])
        random_items = np.mean([runs["random"][m]["items"] for m in args.models])
        results.append({
            "target_se": target_se,
            "adaptive_items_mean": float(adaptive_items), "random_items_mean": float(random_items),
            "random_over_adaptive": round(float(random_items / adaptive_items), 2),
            "full_over_adaptive": round(float(release.manifest.counts.items / adaptive_items), 2),
            "spearman_adaptive_vs_full": spearman([runs["adaptive"][m]["theta"] for m in args.models], full_theta),
            "spearman_random_vs_full": spearman([runs["random"][m]["theta"] for m in args.models], full_theta),
            "items_to_se": {order: {m: runs[order][m]["items_to_se"] for m in args.models} for order in runs},
            "runs": runs,
        })
    summary = {
        "models": args.models, "text_format": args.text_format.value, "max_prompt_tokens": args.max_prompt_tokens,
        "templates_left_out": {t: n for t, n in sorted(longest.items()) if t not in kept},
        "release_items": release.manifest.counts.items,
        "release_templates": release.manifest.counts.templates, "calibration_id": calibration.calibration_id,
        "calibration_converged": calibration.converged, "needs_review": calibration.needs_review,
        "discrimination_median": round(float(np.median(discriminations)), 3), "full": full,
        "results": results, "timings": timings, "seconds": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(summary, indent=1)
    if args.json is not None:
        args.json.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
