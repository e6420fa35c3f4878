"""How well each judge model separates good templates from flawed ones: AUC per criterion.

Reads the semantic corpus (``--corpus DIR``, default ``benchmarks/semantic_corpus``: a
``manifest.toml`` of ``[[template]]`` entries with ``file``, ``kind`` good/flawed/gaming, ``class``
and ``handler``), draws a few items of each template in the sandbox, has each judge score them on
every criterion as the panel does (`verification.judges`, the same prompt and rendering), and
prints, per judge, the AUC of each criterion and of the mean over criteria: the probability that
a good template scores above a flawed one (ties count half; 0.5 is chance). Gaming templates count
as flawed (``--flawed-kinds`` to change). A judge whose mean-score AUC is below 0.7 should be
marked advisory (``ITEMSMITH_ADVISORY_JUDGES``; the local qwen2.5-coder-1.5b is by default).

    python benchmarks/judge_discrimination.py --judge local:qwen2.5-coder-1.5b --per-kind 6
    python benchmarks/judge_discrimination.py --corpus /path/to/semantic_corpus --judge openai:gpt-4o

Prints one JSON object on stdout; progress on stderr. Local judges on a shared 2-core machine take
tens of seconds per template: use ``--per-kind`` for a subset (the first N of each kind).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path

from itemsmith.agents.llm.factory import CallLog, build_judges, retry_policy
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import get_settings
from itemsmith.items.schema import Item
from itemsmith.sandbox import run_template
from itemsmith.verification.judges import PanelConfig, ajudge_template
from itemsmith.verification.samples import TemplateSample

ADVISORY_BELOW = 0.7


def auc(good: Sequence[float], flawed: Sequence[float]) -> float | None:
    """P(a good template's score > a flawed one's), ties half (the Mann-Whitney U / n m)."""
    if not good or not flawed:
        return None
    wins = sum((g > f) + 0.5 * (g == f) for g in good for f in flawed)
    return wins / (len(good) * len(flawed))


def load_corpus(folder: Path, per_kind: int | None) -> list[dict[str, str]]:
    manifest = tomllib.loads((folder / "manifest.toml").read_text())
    entries: list[dict[str, str]] = manifest.get("template", [])
    if per_kind is None:
        return entries
    taken: dict[str, int] = {}
    chosen = []
    for entry in entries:
        if taken.get(entry["kind"], 0) < per_kind:
            taken[entry["kind"]] = taken.get(entry["kind"], 0) + 1
            chosen.append(entry)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("benchmarks/semantic_corpus"))
    parser.add_argument("--judge", action="append", type=ModelSpec.parse, help="judge spec (repeat; default: ITEMSMITH_DEFAULT_JUDGES)")
    parser.add_argument("--per-kind", type=int, help="the first N templates of each kind only")
    parser.add_argument("--items", type=int, default=3, help="items per template shown to the judges")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--flawed-kinds", default="flawed,gaming")
    args = parser.parse_args()
    settings = get_settings()
    specs = args.judge or settings.default_judges
    judges = build_judges(specs, settings=settings, samples=1)
    flawed_kinds = set(args.flawed_kinds.split(","))
    entries = load_corpus(args.corpus, args.per_kind)
    panel = PanelConfig(items_per_prompt=args.items, max_concurrency=1)
    scores: dict[str, list[tuple[str, str, dict[str, float]]]] = {j.config.name: [] for j in judges}
    print(f"{len(entries)} templates, judges {[str(s) for s in specs]}, load average {os.getloadavg()[0]:.2f}", file=sys.stderr)
    started = time.monotonic()
    for entry in entries:
        source = (args.corpus / entry["file"]).read_text()
        result = run_template(source, entry["handler"], num_samples=args.items, seed=args.seed)
        if not result.ok:
            print(f"  {entry['file']}: did not run ({result.error}); skipped", file=sys.stderr)
            continue
        sample = TemplateSample(template_id=entry["file"], items=[Item.model_validate(i) for i in result.items],
                                task=f"questions about the {entry['handler']} data that need the series",
                                dataset=entry["handler"])
        for judge in judges:
            one = time.monotonic()
            judgement = asyncio.run(ajudge_template(sample, [judge.bind(CallLog(), retry_policy(settings))], panel))
            by_criterion = {s.criterion: s.score for s in judgement.scores if s.score is not None}
            scores[judge.config.name].append((entry["kind"], entry["file"], by_criterion))
            print(f"  {entry['kind']:7} {entry['file']:50} {judge.config.name}: "
                  + " ".join(f"{c[:5]} {v:.1f}" for c, v in by_criterion.items())
                  + f" ({time.monotonic() - one:.0f} s)", file=sys.stderr, flush=True)
    report: dict[str, object] = {"corpus": str(args.corpus), "templates": len(entries),
                                 "wall_s": round(time.monotonic() - started), "judges": {}}
    for name, rows in scores.items():
        per: dict[str, object] = {}
        for criterion in [*panel.criteria, "mean"]:
            def value(row: dict[str, float], criterion: str = criterion) -> float | None:
                if criterion == "mean":
                    return sum(row.values()) / len(row) if row else None
                return row.get(criterion)
            good = [v for kind, _, row in rows if kind == "good" and (v := value(row)) is not None]
            bad = [v for kind, _, row in rows if kind in flawed_kinds and (v := value(row)) is not None]
            area = auc(good, bad)
            per[criterion] = {"auc": None if area is None else round(area, 3), "n_good": len(good),
                              "n_flawed": len(bad),
                              "mean_good": round(sum(good) / len(good), 2) if good else None,
                              "mean_flawed": round(sum(bad) / len(bad), 2) if bad else None}
        mean_auc = per["mean"]["auc"]  # type: ignore[index]
        per["advisory"] = mean_auc is None or mean_auc < ADVISORY_BELOW
        report["judges"][name] = per  # type: ignore[index]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
