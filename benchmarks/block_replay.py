"""The trusted block replay over template corpora, without any model: per template, how many drawn
items replay and agree, disagree, are not replayed (and why), and the verdict the re-derivation stage
would take from the replay (agrees, disagrees, or "model": the solver model decides).

Corpora: the curated bank (correct), the semantic corpus (`benchmarks/semantic_corpus`, good and
flawed), and `benchmarks/block_templates` (correct and flawed block templates, some over statsmodels'
US macro data with six decimals). Items are drawn as the stage draws them (three small draws and one
of 60; fixed seeds here). A handler that does not load (a package not installed) is reported.

    python benchmarks/block_replay.py                       # everything, a markdown table
    python benchmarks/block_replay.py --only block_templates --json /tmp/replay.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

from itemsmith.items.schema import Item, RunStatus
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated
from itemsmith.verification.audit.record_data import fetch_record_data
from itemsmith.verification.block_replay import block_record_ids, replay_block_items, replay_verdict

HERE = Path(__file__).resolve().parent
PLAN = [(101, 10), (102, 8), (103, 12), (104, 60)]  # (seed, num_samples): as the stage draws


def templates(only: list[str]) -> list[tuple[str, str, str, str, str]]:
    """(corpus, name, kind, source, handler) of every template."""
    found = []
    if not only or "curated" in only:
        found += [("curated", t.id, "good", t.source, t.handler or "synthetic") for t in load_curated().values()]
    corpus = HERE / "semantic_corpus"
    if not only or "semantic_corpus" in only:
        for entry in tomllib.loads((corpus / "manifest.toml").read_text()).get("template", []):
            handler = entry["handler"]
            handler = str(HERE.parent / handler) if handler.endswith(".py") else handler
            found.append(("semantic_corpus", entry["file"], entry["kind"], (corpus / entry["file"]).read_text(),
                          handler))
    if not only or "block_templates" in only:
        for path in sorted((HERE / "block_templates").glob("*_*.py")):
            if path.stem.startswith(("good_", "flawed_")):
                handler = str(HERE / "block_templates" / "macro_handler.py") if "_macro_" in path.stem else "weather"
                found.append(("block_templates", path.stem, path.stem.split("_")[0], path.read_text(), handler))
    return found


def replay(pool: SandboxPool, source: str) -> dict[str, object]:
    drawn: list[tuple[int, Item]] = []
    for seed, size in PLAN:
        result = pool.run(source, num_samples=size, seed=seed)
        if result.status is not RunStatus.ok:
            return {"verdict": "draw failed", "error": f"{result.status.value}: {result.error}"}
        drawn += [(seed, Item.model_validate(raw)) for raw in result.items]
    items = [item for _, item in drawn]
    named = block_record_ids(items)
    if not named:
        return {"verdict": "model", "items": len(items), "outcomes": {"absent": len(items)}}
    data = fetch_record_data(lambda text: pool.run(text, num_samples=1, seed=0), named)
    replayed = replay_block_items(items, data)
    report = replay_verdict(drawn, replayed, seeds=[s for s, _ in PLAN], sizes=[n for _, n in PLAN])
    reasons = Counter(r.reason for r in replayed if r.outcome == "unverifiable")
    return {"verdict": "model" if report is None else report.status, "items": len(items),
            "outcomes": dict(Counter(r.outcome for r in replayed)),
            "not_replayed_because": reasons.most_common(1)[0][0] if reasons else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="curated, semantic_corpus or block_templates")
    parser.add_argument("--json", type=Path, help="also write every row to this file")
    args = parser.parse_args()
    pools: dict[str, SandboxPool | str] = {}
    rows = []
    started = time.monotonic()
    print("| corpus | template | kind | items | outcomes | verdict | not replayed because |")
    print("|---|---|---|---|---|---|---|")
    try:
        for corpus, name, kind, source, handler in templates(args.only):
            if handler not in pools:
                try:
                    pools[handler] = SandboxPool(handler)
                except (RuntimeError, ValueError, OSError) as exc:  # a handler that does not load: reported
                    pools[handler] = f"handler {handler} does not load: {str(exc)[:100]}"
            pool = pools[handler]
            row = {"verdict": "no handler", "error": pool} if isinstance(pool, str) else replay(pool, source)
            rows.append({"corpus": corpus, "template": name, "kind": kind, **row})
            outcomes = ", ".join(f"{n} {o}" for o, n in sorted(row.get("outcomes", {}).items()))  # type: ignore[union-attr]
            print(f"| {corpus} | {name} | {kind} | {row.get('items', '')} | {outcomes} | {row['verdict']} | "
                  f"{row.get('not_replayed_because') or row.get('error') or ''} |", flush=True)
    finally:
        for pool in pools.values():
            if isinstance(pool, SandboxPool):
                pool.close()
    summary = Counter((r["corpus"], r["kind"], r["verdict"]) for r in rows)
    print("\n" + "\n".join(f"{c} {k}: {v} x{n}" for (c, k, v), n in sorted(summary.items())), file=sys.stderr)
    print(f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
