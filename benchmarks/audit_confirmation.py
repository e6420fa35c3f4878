"""How often the item audit's blind solvers win on first draws, and how often the win is confirmed.

    python benchmarks/audit_confirmation.py --runs 1500                   # a sound template
    python benchmarks/audit_confirmation.py --corpus benchmarks/semantic_corpus/gaming --runs 3

Without `--corpus`: the authoring-loop tests' well-made template (the mean of a random window, on
their tiny handler file) audited `--runs` times with fresh OS seeds; every win is a chance win, so
"rejected" is the false-rejection rate. With `--corpus`: each template file of the folder (named
`<handler>_...py`, a built-in handler) `--runs` times; there a dropped win is a cue the
confirmation let through. Prints one line per dropped or rejected audit and a summary.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from itemsmith.sandbox import SandboxPool
from itemsmith.verification.audit import audit_template
from tests.agents.conftest import GOOD, HANDLER_SOURCE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="audits per template (default 200)")
    parser.add_argument("--corpus", type=Path, default=None, help="a folder of <handler>_*.py templates")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.corpus is None:
            handler = Path(folder) / "tiny_handler.py"
            handler.write_text(HANDLER_SOURCE)
            templates = [("authoring-loop GOOD", str(handler), GOOD)]
        else:
            templates = [(p.name, p.name.split("_")[0], p.read_text()) for p in sorted(args.corpus.glob("*.py"))]
        pools: dict[str, SandboxPool] = {}
        audits = wins = confirmed = rejected = 0
        try:
            for name, handler_name, source in templates:
                if handler_name not in pools:
                    pools[handler_name] = SandboxPool(handler_name, workers=2)
                pool = pools[handler_name]
                for _ in range(args.runs):
                    report = audit_template(source, handler_name, pool=pool)
                    audits += 1
                    won = bool(report.confirmation_seeds)
                    wins += won
                    confirmed += won and bool(report.shortcuts)
                    rejected += not report.passed
                    if won and not report.shortcuts:
                        print(f"dropped  {name}: {report.summary()}")
                    elif not report.passed and args.corpus is None:
                        print(f"rejected {name}: {report.summary()} (seeds {report.seeds}, sizes {report.sizes})")
        finally:
            for pool in pools.values():
                pool.close()
    print(f"{audits} audits of {len(templates)} templates: a solver won on the first draws in {wins}, "
          f"confirmed in {confirmed}, dropped in {wins - confirmed}; rejected {rejected} ({rejected / audits:.2%})")


if __name__ == "__main__":
    main()
