"""Benchmark: the walk of one authoring request through the package's modules, and its import arrows.

The walk: one template authored offline, as `authoring_scaling.py` authors them (its handler, plan
and scripted reply; the real sandbox, no judge or student models), one slot, traced with `sys.setprofile` on the main thread. Each Python
call or return that lands in an ``itemsmith`` module makes that module the current one; the walk
is the sequence of current modules with repeats folded. Rooms = distinct modules, doors = distinct
(from, to) pairs the walk passes between them, stays = entries into a module, returns = stays
beyond the first in a room (coming back to a module already left).
The same is counted a level up, on packages (``itemsmith.agents.authoring``, ``itemsmith.sandbox``).
A warm-up run first imports what the run imports lazily, so import-time code is not walked. Work in
other threads and in the sandbox's processes is not seen.

The arrows (``--arrows``): grimp's graph of the package; an arrow is a pair of packages with at
least one import from one to the other, counted twice: between the top-level packages, and with
the subpackages of ``itemsmith.agents`` as packages of their own (its own modules as one). An arrow
runs upward when a lower layer of pyproject's layer contracts imports a higher one.
grimp reads the source tree, so run it on the namespace tree of links:

    python benchmarks/call_walk.py
    PYTHONPATH=$(.ci/namespace-tree) python benchmarks/call_walk.py --arrows
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import tomllib
from pathlib import Path
from types import FrameType
from typing import Any

from authoring_scaling import HANDLER, TEMPLATE, plan  # the same offline run, one template

from itemsmith.agents import AuthorConfig, author
from itemsmith.agents.llm import ModelHandle, ScriptedChatModel
from itemsmith.sandbox import SandboxPool

ROOT = Path(__file__).resolve().parents[1]
SPLIT = "itemsmith.agents"  # a package whose subpackages count as packages of their own


def package_of(module: str, split: bool = True) -> str:
    """``itemsmith.X`` for a module of a top-level package; with `split`, one level deeper inside `SPLIT`
    (its own modules count as `SPLIT`)."""
    parts = module.split(".")
    depth = 3 if split and module.startswith(SPLIT + ".") and len(parts) > 3 else 2
    return ".".join(parts[:depth])


class Walk:
    """The sequence of `itemsmith` modules the traced code runs in, repeats folded."""

    def __init__(self) -> None:
        self.stays: list[str] = []

    def _enter(self, frame: FrameType | None) -> None:
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if module.startswith("itemsmith."):
                if not self.stays or self.stays[-1] != module:
                    self.stays.append(module)
                return
            frame = frame.f_back

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self._enter(frame)
        elif event == "return":
            self._enter(frame.f_back)

    def summary(self, key: Any = None) -> dict[str, int]:
        walk = [key(m) for m in self.stays] if key else self.stays
        folded = [m for i, m in enumerate(walk) if i == 0 or walk[i - 1] != m]
        return {"rooms": len(set(folded)), "doors": len(set(zip(folded, folded[1:]))), "stays": len(folded),
                "returns": len(folded) - len(set(folded))}


def run_once(handler: Path, pool: SandboxPool, out: Path, run_id: str, walk: Walk | None) -> int:
    generator = ModelHandle(ScriptedChatModel.from_source([TEMPLATE]), "scripted", "generator", 60.0)
    planner = ModelHandle(ScriptedChatModel.from_source([plan(1)]), "scripted", "planner", 60.0)
    config = AuthorConfig(handler=str(handler), task="water levels", templates=1, slots=1, out_dir=out,
                          checkpoint="memory", run_id=run_id, judges=[], students=[])
    if walk is not None:
        sys.setprofile(walk.profile)
    try:
        report = asyncio.run(author(config, generator_model=generator, planner_model=planner, pool=pool))
    finally:
        sys.setprofile(None)
    return len(report.accepted)


def walk_request() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        handler = Path(tmp) / "levels_handler.py"
        handler.write_text(HANDLER)
        with SandboxPool(str(handler), workers=1) as pool:
            run_once(handler, pool, Path(tmp) / "out", "warm-up", None)
            walk = Walk()
            accepted = run_once(handler, pool, Path(tmp) / "out", "walked", walk)
    return {"accepted": accepted, "modules": walk.summary(), "packages": walk.summary(package_of),
            "rooms": sorted(set(walk.stays))}


def import_arrows() -> dict[str, Any]:
    import grimp

    graph = grimp.build_graph("itemsmith")
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    ranks = [{name.strip(): rank for rank, name in enumerate(c["layers"])} for c in contracts if c["type"] == "layers"]
    imports = [(importer, imported) for importer in graph.modules
               for imported in graph.find_modules_directly_imported_by(importer)]
    result: dict[str, Any] = {}
    for split in (False, True):
        arrows = {(package_of(a, split), package_of(b, split)) for a, b in imports}
        arrows = {(a, b) for a, b in arrows if a != b and a.startswith("itemsmith.") and b.startswith("itemsmith.")}
        upward = sorted(f"{a} -> {b}" for a, b in arrows
                        for rank in ranks if a in rank and b in rank and rank[a] > rank[b])
        inside = sorted(f"{a} -> {b}" for a, b in arrows if a.startswith(SPLIT) and b.startswith(SPLIT))
        result["with the subpackages of " + SPLIT if split else "top-level packages"] = {
            "arrows": len(arrows), "upward": upward, **({"inside": inside} if split else {})}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrows", action="store_true", help="count the import arrows between packages instead")
    args = parser.parse_args(argv)
    print(json.dumps(import_arrows() if args.arrows else walk_request(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
