"""The re-derivation stage over template files: per template, the verdict (agrees / disagrees /
ambiguous / unconfirmed / reads_text / not re-derivable), its agreement over fresh draws, the
programs and tries it took, the stage's wall time, and (with --show) one item where it did not agree
and the program it wrote.

The solver is the stage's default (``ITEMSMITH_SOLVER``, else the generator a run would use: the
local qwen2.5-coder-1.5b offline), ``--solver SPEC``, or a replayed hosted solver (``--replies``).
The draws and thresholds are the stage's (``ITEMSMITH_REDERIVATION_*``). Note the machine's load
(`uptime`) beside the times. Run by hand:

    python benchmarks/rederivation_curated.py                     # all 78 curated, a markdown table
    python benchmarks/rederivation_curated.py --limit 10 --show   # the first ten, with disagreements
    python benchmarks/rederivation_curated.py exam_period feat_break_date --json out.json
    python benchmarks/rederivation_curated.py out/RUN/templates/*.py --handler weather --repeat 4
    python benchmarks/rederivation_curated.py --corpus benchmarks/semantic_corpus --kind good

The hosted path without a key (`benchmarks/replay_server.py`): with a fixed ``--seed`` the stage's
draws and prompts are reproducible, so

    python benchmarks/rederivation_curated.py --seed 7 --dump-prompts /tmp/hosted   # prompts/<key>.md
    # someone who never sees the templates writes /tmp/hosted/replies/<key>.md for each prompt,
    # and may try it on the items the prompt shows (prompts/<key>.items.json, whole series, no keys):
    python benchmarks/solver_try.py /tmp/hosted/prompts/<key>.items.json reply.md
    python benchmarks/rederivation_curated.py --seed 7 --replies /tmp/hosted --json /tmp/hosted.json

replays those replies through a local OpenAI-compatible server as a hosted solver's answers. A
prompt the stage asks that has no reply (a retry after an error, another program after a
disagreement) is written to /tmp/hosted/missing/ and the template is reported errored: answer it
and replay again.

A template file (a path ending in .py) runs on `--handler`; `--repeat N` runs each template N
times, each on its own fresh draws (not with --seed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import tomllib
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_server import replay_server, write_prompt

from itemsmith.agents.llm.factory import build_solver, retry_policy
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import get_settings
from itemsmith.agents.stages.rederivation import RederivationVerifier, solver_messages
from itemsmith.items.schema import RunStatus, StructureReport
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.templates_bank.curated import load_curated

STATUSES = ("agrees", "disagrees", "ambiguous", "unconfirmed", "reads_text", "not_rederivable")


def collect(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """(name, source, handler) of every template asked for."""
    names = [name for name in args.templates if not name.endswith(".py")]
    files = [Path(name) for name in args.templates if name.endswith(".py")]
    templates: list[tuple[str, str, str]] = []
    if args.corpus is None or names:
        templates += [(t.id, t.source, t.handler or "synthetic") for k, t in load_curated().items()
                      if not args.templates or k in names]
    templates += [(path.stem, path.read_text(), args.handler) for path in files]
    if args.corpus is not None:
        manifest = tomllib.loads((args.corpus / "manifest.toml").read_text())
        for entry in manifest.get("template", []):
            if args.kind and entry["kind"] not in args.kind:
                continue
            handler = entry["handler"]
            if handler.endswith(".py") and not Path(handler).is_file():
                handler = str(args.corpus / handler)
            templates.append((entry["file"], (args.corpus / entry["file"]).read_text(), handler))
    return templates[:args.limit] if args.limit else templates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("templates", nargs="*", help="curated template ids or template .py files (default: all curated)")
    parser.add_argument("--handler", default="weather", help="the handler of template files (default: weather)")
    parser.add_argument("--corpus", type=Path, help="a corpus folder (manifest.toml): its templates too")
    parser.add_argument("--kind", action="append", help="with --corpus: only these kinds (good, flawed, gaming)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each template, each on fresh draws")
    parser.add_argument("--solver", type=ModelSpec.parse, help="solver model spec (default: the stage's default)")
    parser.add_argument("--seed", type=int, help="replay: the draws, option orders and prompts follow from it")
    parser.add_argument("--dump-prompts", type=Path, help="write each program's first prompt to DIR/prompts; no run")
    parser.add_argument("--replies", type=Path, help="a replayed hosted solver: DIR/replies/<prompt key>.md")
    parser.add_argument("--limit", type=int, help="the first N templates only")
    parser.add_argument("--show", action="store_true", help="print each disagreement and its program")
    parser.add_argument("--json", type=Path, help="also write every report to this file")
    args = parser.parse_args()
    if (args.dump_prompts or args.replies) and args.seed is None:
        parser.error("--dump-prompts and --replies need --seed (the prompts must be the same in both)")
    settings = get_settings()
    templates = collect(args)
    runs = [(f"{name} #{run + 1}" if args.repeat > 1 else name, source, handler)
            for name, source, handler in templates for run in range(args.repeat)]
    pools: dict[str, SandboxPool] = {}
    reports = {}
    started = time.monotonic()
    with ExitStack() as stack:
        stack.callback(lambda: [pool.close() for pool in pools.values()])
        spec = args.solver or settings.solver or settings.default_generator()
        if args.replies is not None:
            base_url, _ = stack.enter_context(replay_server(args.replies))
            spec = ModelSpec.parse(f"openai_compatible:replayed@{base_url}")
        solver = None if args.dump_prompts else build_solver(spec, settings=settings)  # a dump asks no model
        print(f"solver {spec}; load average {os.getloadavg()[0]:.2f} at start; {len(runs)} runs", file=sys.stderr)
        if not args.dump_prompts:
            print("| template | verdict | agree / answered (items) | programs | tries | wall s |")
            print("|---|---|---|---|---|---|")
        for template_id, source, handler in runs:
            pool = pools.get(handler) or pools.setdefault(handler, SandboxPool(handler, workers=2))
            stage = RederivationVerifier(solver, str(spec), pool, retry=retry_policy(settings), seed=args.seed)
            if args.dump_prompts:
                for number, shown in enumerate(stage.first_examples(source), 1):
                    rows = [{"role": {"system": "system", "human": "user"}[m.type], "content": m.content}
                            for m in solver_messages(shown)]
                    path = write_prompt(args.dump_prompts, rows)
                    path.with_suffix(".items.json").write_text(  # whole series, to try a program on
                        json.dumps([view.model_dump(mode="json") for view in shown]))
                    with (args.dump_prompts / "index.tsv").open("a") as index:
                        index.write(f"{path.stem}\t{template_id}\tprogram {number}\n")
                print(f"{template_id}: prompts written", file=sys.stderr)
                continue
            start = time.monotonic()
            result = asyncio.run(stage(source, StructureReport(status=RunStatus.ok)))
            wall = time.monotonic() - start
            verdict = result.rederivation
            if verdict is None:  # a draw failed, or a call gave no usable reply
                print(f"| {template_id} | {'errored' if result.errored else 'draw failed'}: "
                      f"{result.decision.reasons[0][:120]} | | | | {wall:.0f} |", flush=True)
                reports[template_id] = {"status": "errored", "reason": result.decision.reasons[0], "wall_s": wall}
                continue
            reports[template_id] = {**verdict.model_dump(mode="json"), "wall_s": wall}
            print(f"| {template_id} | {verdict.status} | {verdict.agree} / {verdict.answered} ({verdict.n_items}) "
                  f"| {verdict.programs} | {verdict.tries} | {wall:.0f} |", flush=True)
            if args.show and verdict.status != "agrees":
                for example in verdict.examples[:1]:
                    print(f"    item: {example.question!r} options {example.options} key {example.key} "
                          f"value {example.value!r} fits {example.fits} {example.error or ''}", file=sys.stderr)
                print("    " + (verdict.second_opinion or "") + "\n    "
                      + (verdict.program or verdict.error or "").replace("\n", "\n    "), file=sys.stderr)
    if args.dump_prompts:
        return
    counts = {s: sum(r["status"] == s for r in reports.values()) for s in (*STATUSES, "errored")}
    walls = sorted(r["wall_s"] for r in reports.values())
    median = walls[len(walls) // 2] if walls else 0.0
    print(f"\n{counts}; median wall {median:.0f} s per template; {time.monotonic() - started:.0f} s in all; "
          f"load average {os.getloadavg()[0]:.2f} at the end", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
