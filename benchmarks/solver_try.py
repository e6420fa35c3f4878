"""Try a solver reply on the items its prompt shows, in the sandbox, before replying: each item's
value, or the error the program raised. It is what the re-derivation stage itself checks before it
uses a program (a usable value on every item shown; told the error otherwise), and it shows no key.

For whoever writes the replayed hosted solver's replies (`benchmarks/rederivation_curated.py
--dump-prompts` writes `prompts/<key>.items.json` beside each prompt):

    python benchmarks/solver_try.py /tmp/hosted/prompts/<key>.items.json /tmp/hosted/replies/<key>.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from itemsmith.agents.stages.rederivation import extract_solver
from itemsmith.sandbox.executor import SandboxPool
from itemsmith.verification.rederivation import SolverView, run_solver, usable
from itemsmith.verification.settings import VerificationSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("items", type=Path, help="prompts/<key>.items.json")
    parser.add_argument("reply", type=Path, help="the reply (a ```python block defining solve)")
    args = parser.parse_args()
    views = [SolverView.model_validate(raw) for raw in json.loads(args.items.read_text())]
    program = extract_solver(args.reply.read_text())
    config = VerificationSettings().rederivation
    with SandboxPool("weather", workers=1) as pool:  # a solver reads only its items, never the handler
        outcomes = run_solver(program, views, pool, wall_s=config.solver_wall_s, item_s=config.solver_item_s)
    for number, (view, outcome) in enumerate(zip(views, outcomes, strict=True), 1):
        problem = usable(outcome, view)
        print(f"item {number}: {outcome.value!r}" + (f"  <- not usable: {problem}" if problem else ""))


if __name__ == "__main__":
    main()
