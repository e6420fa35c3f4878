"""Verdicts that track correctness: `verify`'s model-free stages (and, if asked, the re-derivation)
over a corpus of known templates, repeated, in one process.

For every template of the corpus (`benchmarks/semantic_corpus/manifest.toml`: good, flawed and
gaming templates, some on users' own handlers) it runs `agents.stages.template_verification.verify_template`,
the function behind `itemsmith verify`, with no judges and no students, `--repeat` times on fresh
OS-random seeds, and reports:

- **acceptance of correct templates** (target >= 90 %), and for each false rejection the findings;
- **recall per flaw class, counted only when the flaw is named**: a flawed template counts as caught
  when the rejection's findings include one that names its class (`NAMED`: the wrong data for a
  lying derivation, the dates for a date off by one, ...), not when it is rejected for something
  else (a pool of items, a shortcut its correct twin has too). Rejected-at-all is reported beside it;
- **verdict stability**: in how many runs each template got its most frequent verdict (target: 19 of
  20 for every template).

    python benchmarks/verdicts.py --repeat 20 --json benchmarks/results/verdicts_model_free.json
    python benchmarks/verdicts.py --only good_users --repeat 3
    python benchmarks/verdicts.py --rederivation --only good_users/co2_range_blocks.py   # one file
    python benchmarks/verdicts.py --rederivation --solver local:qwen2.5-coder-1.5b --only flawed

`--rederivation` uses the stage's default solver: the local generator where `itemsmith[local]` is
installed (minutes a template), else the trusted replay of block calls alone. The table in
docs/benchmarks.md is the replay alone, on any machine: `ITEMSMITH_SOLVER=local:none` names a local
model that does not exist, so the stage replays block calls and re-derives nothing else.

One warm sandbox pool per handler (two workers). Note the load (`uptime`) beside the times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from itemsmith.agents.config import AuthorConfig
from itemsmith.agents.settings import get_settings
from itemsmith.agents.stages.template_verification import TemplateVerification, verify_template
from itemsmith.sandbox import SandboxPool
from itemsmith.verification.settings import VerificationSettings

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "semantic_corpus"

_WRONG_KEY = {"key_is_statistic", "key_statistic", "statement_truth", "rederivation:disagrees"}
_WITHOUT_DATA = {"position", "length_rank", "numeric_rank", "centre", "word_overlap", "memorization", "odd_format",
                 "tf_wording", "stated_in_text", "paraphrased_in_text", "position_token", "question_memory", "learned",
                 "rederivation:reads_text"}
# what names each flaw class: the findings (check or solver names, "rederivation:<status>") that say
# what is wrong with a template of the class
NAMED: dict[str, set[str]] = {
    "shifted_window": _WRONG_KEY | {"data_fidelity", "dates_shown"},
    "wrong_channel": _WRONG_KEY | {"data_fidelity"},
    "other_channel": _WRONG_KEY | {"data_fidelity"},
    "whole_record": _WRONG_KEY,
    "other_record": _WRONG_KEY | {"data_fidelity"},
    "precedence": _WRONG_KEY,
    "wrong_statistic": _WRONG_KEY,
    "wrong_statistic_derived": _WRONG_KEY | {"data_fidelity"},
    "printed_threshold": _WRONG_KEY,
    "size_dependent": _WRONG_KEY | {"key_consistency"},
    "two_correct": {"distinct_options", "ambiguous_key", "rederivation:ambiguous"},
    "tie": {"distinct_options", "ambiguous_key", "rederivation:ambiguous"},
    "approximate_close_options": {"ambiguous_key", "distinct_options", "rederivation:ambiguous"},
    "equivalent_options": {"distinct_options", "ambiguous_key"},
    "mislabelled_unit": {"data_fidelity"},
    "mislabelled_series": {"data_fidelity"},
    "lying_derivation": {"data_fidelity"},
    "shifted_timestamps": {"data_fidelity", "dates_shown"},
    "date_off_by_one": {"dates_shown"},
    "answer_in_text": _WITHOUT_DATA | {"key_in_question"},
    "encoded_answer": _WITHOUT_DATA,
    # a key fixed per record, remembered across seeds: by design a property of the item pool (keys that
    # recur with their question), which the report states and never rejects for
    "memorizable_key": _WITHOUT_DATA | {"pool:recurring_keys"},
}
_POOL = {"pool:recurring_keys"}
GAMING = {"round_number", "digit_pattern", "ratio_distractors", "paraphrase", "tf_giveaway", "memorizable_key",
          "middle_value", "option_in_context"}


def entries(only: list[str]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = tomllib.loads((CORPUS / "manifest.toml").read_text())["template"]
    if only:
        rows = [r for r in rows if r["kind"] in only or r["class"] in only or r["file"].split("/")[0] in only
                or r["file"] in only]
    return rows


def handler_of(entry: dict[str, str]) -> str:
    handler = entry["handler"]
    return str(ROOT / handler) if handler.endswith(".py") else handler


def significant_gains(result: TemplateVerification, alpha: float) -> dict[str, float]:
    """Each blind solver significant after Holm, with its gain over chance (what the cue is worth):
    the template's verdict at a stricter `min_excess` can be read off these."""
    return {s.solver: round(s.gain, 3) for stage in result.results if stage.audit is not None
            for s in stage.audit.solvers if s.p_corrected is not None and s.p_corrected < alpha and s.gain is not None}


def findings(result: TemplateVerification) -> list[str]:
    """The names of what rejected the template (failed checks, winning solvers, a re-derivation
    verdict), and "pool:recurring_keys" where the report states that keys recur with their question."""
    names: list[str] = []
    if not result.structure.passed:
        return ["structure"]
    for stage in result.results:
        pool = stage.audit.pool if stage.audit is not None else None
        if pool is not None and pool.recurring_keys > VerificationSettings().audit.pool_max_repeats:
            names.append("pool:recurring_keys")
        if stage.audit is not None and not stage.audit.passed:
            names += [f.check for f in stage.audit.findings if not f.passed and f.kind != "pool"]
            names += stage.audit.shortcuts
            if stage.audit.error:
                names.append("audit_error")
        if stage.rederivation is not None and stage.rederivation.rejects:
            names.append(f"rederivation:{stage.rederivation.status}")
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a kind, class, folder or file (repeatable)")
    parser.add_argument("--repeat", type=int, default=1, help="verify runs per template, each on fresh seeds")
    parser.add_argument("--rederivation", action="store_true", help="run the re-derivation stage too")
    parser.add_argument("--solver", help="the re-derivation's solver spec (default: the stage's)")
    parser.add_argument("--json", type=Path, help="write every run to this file")
    args = parser.parse_args()
    settings = get_settings()
    rows = entries(args.only)
    pools: dict[str, SandboxPool] = {}
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    started = time.monotonic()
    print(f"{len(rows)} templates x {args.repeat}; load average {os.getloadavg()[0]:.2f} at start", file=sys.stderr)
    try:
        for entry in rows:
            handler = handler_of(entry)
            pool = pools.get(handler) or pools.setdefault(handler, SandboxPool(handler, workers=2))
            config = AuthorConfig(handler=handler, task=f"questions about the {entry['handler']} data", judges=[],
                                  students=[], rederivation=args.rederivation, solver=args.solver)
            source = (CORPUS / entry["file"]).read_text()
            for _ in range(args.repeat):
                one = time.monotonic()
                result = asyncio.run(verify_template(source, config, settings=settings, pool=pool))
                names = findings(result)
                runs[entry["file"]].append({"accepted": result.accepted, "errored": result.errored,
                                            "stage": None if result.accepted else result.decision.stage,
                                            "findings": names, "wall_s": round(time.monotonic() - one, 1),
                                            "gains": significant_gains(result, VerificationSettings().audit.alpha)})
                print(f"{entry['kind']:7} {entry['class']:26} {entry['file']:55} "
                      f"{'accepted' if result.accepted else 'rejected ' + ','.join(names)}", file=sys.stderr,
                      flush=True)
    finally:
        for pool in pools.values():
            pool.close()
    summary = summarize(rows, runs)
    print(json.dumps(summary["totals"], indent=1))
    for line in summary["lines"]:
        print(line)
    print(f"\n{time.monotonic() - started:.0f} s in all; load average {os.getloadavg()[0]:.2f} at the end",
          file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps({"repeat": args.repeat, "rederivation": args.rederivation,
                                         "solver": args.solver, "totals": summary["totals"],
                                         "runs": runs}, indent=1))


def summarize(rows: list[dict[str, str]], runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    good = [r for r in rows if r["kind"] == "good"]
    accepted = sum(run["accepted"] for r in good for run in runs[r["file"]])
    good_runs = sum(len(runs[r["file"]]) for r in good)
    per_class: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        if r["kind"] == "good":
            continue
        wanted = NAMED.get(r["class"], _WITHOUT_DATA if r["class"] in GAMING else set())
        for run in runs[r["file"]]:
            per_class[r["class"]]["runs"] += 1
            per_class[r["class"]]["rejected"] += not run["accepted"]
            per_class[r["class"]]["named"] += bool(set(run["findings"]) & wanted)
    stability = {r["file"]: max(Counter(run["accepted"] for run in runs[r["file"]]).values()) / len(runs[r["file"]])
                 for r in rows if runs[r["file"]]}
    lines = ["| class | runs | rejected | rejected for the flaw (named) |", "|---|---|---|---|"]
    lines += [f"| {klass} | {c['runs']} | {c['rejected']} ({c['rejected'] / c['runs']:.0%}) | {c['named']} "
              f"({c['named'] / c['runs']:.0%}) |" for klass, c in sorted(per_class.items())]
    lines += ["", "(memorizable_key counts as named where the report states that keys recur with their question: a "
              "property of the item pool, never a rejection)", "", "false rejections of correct templates:"]
    lines += [f"- {r['file']}: {', '.join(sorted({n for run in runs[r['file']] for n in run['findings']} - _POOL))} "
              f"({sum(not run['accepted'] for run in runs[r['file']])} of {len(runs[r['file']])} runs)"
              for r in good if any(not run["accepted"] for run in runs[r["file"]])]
    unstable = {f: s for f, s in stability.items() if s < 0.95}
    lines += ["", f"templates whose verdict changed between runs: {len(unstable)}"]
    lines += [f"- {f}: the same verdict in {s:.0%} of runs" for f, s in sorted(unstable.items())]
    named = sum(c["named"] for c in per_class.values())
    flawed_runs = sum(c["runs"] for c in per_class.values())
    totals = {"good_templates": len(good), "good_accepted": accepted, "good_runs": good_runs,
              "good_acceptance": accepted / good_runs if good_runs else None,
              "flawed_runs": flawed_runs, "named_recall": named / flawed_runs if flawed_runs else None,
              "rejected_recall": sum(c["rejected"] for c in per_class.values()) / flawed_runs if flawed_runs else None,
              "classes_below_90": sorted(k for k, c in per_class.items() if c["named"] < 0.9 * c["runs"]),
              "min_stability": min(stability.values()) if stability else None}
    return {"totals": totals, "lines": lines}


if __name__ == "__main__":
    main()
