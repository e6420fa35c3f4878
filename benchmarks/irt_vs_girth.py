"""Template-level 2PL (`verification.irt.calibrate`) against girth's `twopl_mml` and `onepl_mml`.

Simulated 2PL data with known parameters: discrimination ``a ~ LogNormal(0, 0.4)``, difficulty
``b ~ N(0, 1)``, ability ``theta ~ N(0, 1)``; every student answers every instance of every
template, each instance correct with probability ``sigmoid(a (theta - b))``.

girth is item-level and dichotomous. Two fair comparisons (``--girth``):

- ``expanded`` (default): each of a template's instances becomes one girth item (templates x
  instances items by students respondents); a template's girth estimate is the mean of its
  instances' estimates. `calibrate` sees the same responses as binomial counts per
  (template, student).
- ``single``: the first instance only, for both, so a template is exactly one item.

Recovery is the Pearson correlation (and RMSE) of the estimates with the true parameters;
girth's 1PL estimates one common discrimination, so only its difficulty recovery is reported.
``--timing`` adds the case the design measured (500 items by 50 respondents, one instance).

    python benchmarks/irt_vs_girth.py --max-girth-items 1000   # the grid; girth where it sees <= 1000 items
    python benchmarks/irt_vs_girth.py --girth single           # girth and calibrate on one instance each
    python benchmarks/irt_vs_girth.py --timing --templates --students   # only the 500 x 50 timing case
    python benchmarks/irt_vs_girth.py --girth none             # calibrate only (seconds)

girth's 2PL costs roughly 0.2 to 1.5 s per item on this 2-core machine, so the full expanded
grid (up to 5000 girth items per cell) takes hours; calibrate takes at most a few seconds.
Measured here (2 shared cores): 500 x 50 x 1 in 0.8 s against girth's 324 to 438 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from itemsmith.verification.irt import calibrate


@dataclass(frozen=True)
class Simulated:
    a: np.ndarray
    b: np.ndarray
    correct: np.ndarray  # students x templates x instances, bool

    def frame(self) -> pd.DataFrame:
        students, templates, instances = np.meshgrid(*(np.arange(n) for n in self.correct.shape), indexing="ij")
        return pd.DataFrame({"template_id": [f"t{t:05d}" for t in templates.ravel()],
                             "student": [f"s{s:03d}" for s in students.ravel()],
                             "instance": instances.ravel(), "correct": self.correct.ravel().astype(int)})


def simulate(templates: int, students: int, instances: int, seed: int) -> Simulated:
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0.0, 0.4, templates)
    b = rng.normal(0.0, 1.0, templates)
    theta = rng.normal(0.0, 1.0, students)
    p = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    return Simulated(a, b, rng.random((students, templates, instances)) < p[:, :, None])


@dataclass
class Row:
    method: str
    templates: int
    students: int
    instances: int
    seed: int
    seconds: float
    r_discrimination: float | None
    r_difficulty: float
    rmse_discrimination: float | None
    rmse_difficulty: float


def _recovery(method: str, sim: Simulated, seed: int, seconds: float, a_hat: np.ndarray | None,
              b_hat: np.ndarray) -> Row:
    s, t, r = sim.correct.shape

    def corr(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.corrcoef(x, y)[0, 1])

    def rmse(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.sqrt(np.mean((x - y) ** 2)))

    return Row(method, t, s, r, seed, seconds,
               None if a_hat is None else corr(a_hat, sim.a), corr(b_hat, sim.b),
               None if a_hat is None else rmse(a_hat, sim.a), rmse(b_hat, sim.b))


def run_ours(sim: Simulated, seed: int) -> Row:
    frame = sim.frame()
    started = time.perf_counter()
    table = calibrate(frame)
    seconds = time.perf_counter() - started
    table = table.sort_index()
    return _recovery("calibrate (template 2PL)", sim, seed, seconds,
                     table["discrimination"].to_numpy(), table["difficulty"].to_numpy())


def run_girth(sim: Simulated, seed: int, model: str) -> Row:
    from girth import onepl_mml, twopl_mml

    s, t, r = sim.correct.shape
    items = sim.correct.transpose(1, 2, 0).reshape(t * r, s).astype(int)  # (template, instance) x students
    fit = {"2pl": twopl_mml, "1pl": onepl_mml}[model]
    started = time.perf_counter()
    result = fit(items)
    seconds = time.perf_counter() - started
    b_hat = np.asarray(result["Difficulty"], dtype=float).reshape(t, r).mean(axis=1)
    a_hat = None
    if model == "2pl":
        a_hat = np.asarray(result["Discrimination"], dtype=float).reshape(t, r).mean(axis=1)
    return _recovery(f"girth {model}_mml", sim, seed, seconds, a_hat, b_hat)


def _table(rows: list[Row]) -> str:
    def fmt(x: float | None, digits: int = 3) -> str:
        return "-" if x is None else f"{x:.{digits}f}"
    lines = ["| templates | students | instances | method | seconds | r(a) | r(b) | rmse(a) | rmse(b) |",
             "|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    frame = pd.DataFrame([asdict(r) for r in rows])
    keys = ["templates", "students", "instances", "method"]
    mean = frame.groupby(keys, sort=False)[["seconds", "r_discrimination", "r_difficulty",
                                           "rmse_discrimination", "rmse_difficulty"]].mean()
    for (t, s, r, method), row in mean.iterrows():
        lines.append(f"| {t} | {s} | {r} | {method} | {fmt(row.seconds, 2)} | "
                     f"{fmt(None if pd.isna(row.r_discrimination) else row.r_discrimination)} | "
                     f"{fmt(row.r_difficulty)} | "
                     f"{fmt(None if pd.isna(row.rmse_discrimination) else row.rmse_discrimination)} | "
                     f"{fmt(row.rmse_difficulty)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--templates", type=int, nargs="*", default=[50, 200, 1000])
    parser.add_argument("--students", type=int, nargs="*", default=[5, 10, 20])
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--girth", choices=["expanded", "single", "none"], default="expanded")
    parser.add_argument("--max-girth-items", type=int, default=None,
                        help="skip girth where it would see more items than this")
    parser.add_argument("--timing", action="store_true", help="add 500 templates x 50 students x 1 instance")
    parser.add_argument("--json", type=Path, default=None, help="also write every row as JSON here")
    args = parser.parse_args(argv)

    cells = [(t, s, args.instances) for t in args.templates for s in args.students]
    if args.timing:
        cells.append((500, 50, 1))
    rows: list[Row] = []
    for templates, students, instances in cells:
        for seed in args.seeds:
            sim = simulate(templates, students, instances, seed)
            if args.girth == "single":
                sim = Simulated(sim.a, sim.b, sim.correct[:, :, :1])
            rows.append(run_ours(sim, seed))
            print(rows[-1], flush=True)
            girth_items = templates * sim.correct.shape[2]
            if args.girth == "none" or (args.max_girth_items is not None and girth_items > args.max_girth_items):
                continue
            for model in ("2pl", "1pl"):
                rows.append(run_girth(sim, seed, model))
                print(rows[-1], flush=True)
    print()
    print(_table(rows))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1))


if __name__ == "__main__":
    main()
