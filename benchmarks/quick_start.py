"""Benchmark: the README quick-start command, timed, with the default verification pipeline.

Runs ``itemsmith author --handler weather --task ... --templates 3 --no-live --json`` as a
subprocess (no ``--judge`` / ``--student``: the default judge panel and student ladder of the
settings, i.e. the local models that are installed) and reads the run's ``report.json``:

- wall time of the command (model loading included) and the run's own ``wall_s``;
- the generator's rounds, how many wrote code that ran and passed the structure check, and each
  round's status (``copied``: a curated example sent back);
- accepted templates, and the tokens and seconds per accepted template;
- the stages the run ran (on / off with the reason, the models left out);
- per stage, the candidates checked and passed (``acceptance_by_stage``), what the item audit
  rejected candidates for, the capability outcomes;
- Krippendorff's alpha of the judges and what it measures (``judge_agreement_basis``: between
  judges with two or more, over the criteria with one). The script exits 1 when two or more
  candidates were judged and the alpha is still undefined.

    nice -n 10 python benchmarks/quick_start.py --out /tmp/itemsmith-quick-start

Needs the `examples` and `local` extras. Slow on a small CPU (15 minutes and more on 2 cores);
a smoke run: ``--templates 1 --generator local:smollm2-135m``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TASK = "questions about Seattle's daily weather"  # the README's quick start


def command(args: argparse.Namespace, run_id: str) -> list[str]:
    """The quick-start command line, run by this interpreter's itemsmith."""
    cli = [sys.executable, "-c", "from itemsmith.cli.app import app; app(prog_name='itemsmith')"]
    extra = ["--generator", args.generator] if args.generator else []
    return [*cli, "author", "--handler", args.handler, "--task", args.task, "--templates", str(args.templates),
            "--out", str(args.out), "--run-id", run_id, "--no-live", "--json", *extra]


RAN = frozenset({"ok", "verify_rejected", "verify_errored"})  # round statuses whose code ran and passed structure


def measurements(report: dict[str, Any], wall_s: float, exit_code: int) -> dict[str, Any]:
    """What the benchmark records, from a run's report.json."""
    summary = report["summary"]
    statuses = [attempt["status"] for slot in report.get("slots", []) for attempt in slot.get("attempts", [])]
    verification = summary["verification"]
    judged = verification["acceptance_by_stage"].get("judges", {}).get("checked", 0)
    return {
        "exit_code": exit_code, "wall_s": round(wall_s, 1), "run_wall_s": summary["wall_s"],
        "generator": summary["generator"], "slots": summary["slots"], "accepted": summary["accepted"],
        "stages": report.get("stages", []),
        "acceptance_by_stage": verification["acceptance_by_stage"],
        "audit_rejections": verification["audit_rejections"],
        "capability_outcomes": verification["capability_outcomes"],
        "student_accuracy_by_rank": verification["student_accuracy_by_rank"],
        "judge_agreement_alpha": verification["judge_agreement_alpha"],
        "judge_agreement_basis": verification["judge_agreement_basis"],
        "judge_agreement_defined": judged < 2 or verification["judge_agreement_alpha"] is not None,
        "judge_criterion_mean": verification["judge_criterion_mean"],
        "tokens_per_accepted": summary["tokens_per_accepted"],
        "wall_s_per_accepted": round(wall_s / summary["accepted"], 1) if summary["accepted"] else None,
        "input_tokens": summary["input_tokens"], "output_tokens": summary["output_tokens"],
        "verification_calls": verification["calls"], "stage_errors": verification["stage_errors"],
        "rounds": len(statuses), "rounds_code_ran": sum(status in RAN for status in statuses),
        "round_statuses": {status: statuses.count(status) for status in sorted(set(statuses))},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--handler", default="weather")
    parser.add_argument("--task", default=TASK)
    parser.add_argument("--templates", type=int, default=3)
    parser.add_argument("--generator", default=None, help="default: the settings' default (the README's)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/itemsmith-quick-start"))
    parser.add_argument("--timeout-s", type=float, default=4 * 3600)
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    run_id = f"quick-start-{time.strftime('%Y%m%d-%H%M%S')}"
    argv_run = command(args, run_id)
    log = args.out / f"{run_id}.stderr.log"
    started = time.monotonic()
    with log.open("w") as stderr:
        done = subprocess.run(argv_run, stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=args.timeout_s,
                              check=False)
    wall_s = time.monotonic() - started
    header = [line for line in log.read_text().splitlines() if line.startswith(("generator:", "stages:", "  "))]
    print("\n".join(header[:20]), file=sys.stderr)
    report_path = args.out / run_id / "report.json"
    if not report_path.is_file():
        print(f"no report (exit code {done.returncode}); see {log}", file=sys.stderr)
        return 1
    result = {"command": ["itemsmith", *argv_run[3:]], **measurements(json.loads(report_path.read_text()), wall_s,
                                                                       done.returncode)}
    (args.out / f"{run_id}.quick_start.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    if not result["judge_agreement_defined"]:
        print("two or more candidates were judged but the judges' agreement is undefined", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
