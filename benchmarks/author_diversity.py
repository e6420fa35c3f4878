"""Benchmark: how diverse an `itemsmith author` run's accepted items are, next to the curated
templates' items and TimeSeriesExam's published questions, by TimeSeriesExamAgent's measures
(`verification.diversity`: mean pairwise embedding distance with all-MiniLM-L6-v2, and normalized
Levenshtein distance, over 50 texts drawn at random).

Three sets: the run's accepted templates (templates.jsonl, `--samples` items each, drawn in the sandbox with a fixed
seed), the curated templates (`--curated-samples` items each, every curated template), and rounds
1 to 3 of TimeSeriesExam as published (tests/templates_bank/data/timeseriesexam). Each is measured
on the question alone and on the question with its options (`item_text`: what tells apart
templates that share a stem), as the mean over `--draws` random draws of 50 texts. Also the
categories each set covers. Needs the `diversity` extra for the embeddings (else text only).

    python benchmarks/author_diversity.py /tmp/author-run/weather/weather6 [--samples 20] [--draws 5]
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

from itemsmith.items.schema import Item, RunStatus, Template
from itemsmith.sandbox import SandboxPool, run_template
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.diversity import diversity, item_text, minilm_embedder
from itemsmith.verification.structure import check_structure

ROOT = Path(__file__).resolve().parents[1]
TSE = ROOT / "tests" / "templates_bank" / "data" / "timeseriesexam"


def run_items(run: Path, samples: int, seed: int) -> list[tuple[Item, str]]:
    """The items of a run's accepted templates (templates.jsonl) with each template's category."""
    handler = json.loads((run / "report.json").read_text())["handler"]
    templates = [Template.model_validate_json(line) for line in (run / "templates.jsonl").read_text().splitlines()]
    items = []
    with SandboxPool(handler) as pool:
        for template in templates:
            check = check_structure(template.source, handler, num_samples=samples, seed=seed, pool=pool)
            items += [(item, template.category) for item in check.items]
    return items


def curated_items(samples: int, seed: int) -> list[tuple[Item, str]]:
    items = []
    for template in load_curated().values():
        result = run_template(template.source, template.handler or "synthetic", num_samples=samples, seed=seed)
        if result.status is RunStatus.ok:
            items += [(Item.model_validate(raw), template.category) for raw in result.items]
    return items


def tse_items() -> list[tuple[Item, str]]:
    items = []
    for path in sorted(TSE.glob("round_*_qa_dataset.json.gz")):
        for row in json.loads(gzip.open(path).read()):
            options = row["options"] if isinstance(row["options"], list) else ast.literal_eval(row["options"])
            options = [str(o) for o in options]
            if len(set(options)) < 2 or str(row["answer"]) not in options:
                continue
            items.append((Item(question=row["question"], options=options,
                               answer_index=options.index(str(row["answer"]))), str(row["category"])))
    return items


def measured(texts: list[str], draws: int, embedder: Any) -> dict[str, float | None]:
    reports = [diversity(texts, embedder=embedder, seed=seed) for seed in range(draws)]
    embedding = [r.embedding_distance_mean for r in reports if r.embedding_distance_mean is not None]
    return {"embedding_distance": round(float(np.mean(embedding)), 3) if embedding else None,
            "levenshtein": round(float(np.mean([r.levenshtein_mean for r in reports])), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an author run's folder (OUT/RUN_ID: report.json, templates/)")
    parser.add_argument("--samples", type=int, default=20, help="items per accepted template")
    parser.add_argument("--curated-samples", type=int, default=5, help="items per curated template")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--draws", type=int, default=5, help="random draws of 50 texts, averaged")
    args = parser.parse_args()
    try:
        minilm_embedder(["probe"])
        embedder: Any = minilm_embedder
    except ImportError:
        embedder = None
    sets = {"run": run_items(args.run, args.samples, args.seed),
            "curated": curated_items(args.curated_samples, args.seed), "timeseriesexam": tse_items()}
    for name, items in sets.items():
        row = {"set": name, "items": len(items), "categories": len({c for _, c in items}),
               "questions": measured([i.question for i, _ in items], args.draws, embedder),
               "with_options": measured([item_text(i) for i, _ in items], args.draws, embedder)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
