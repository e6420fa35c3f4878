"""Render the dated history of the benchmarks (benchmarks/results/history/*.toml) as Markdown.

docs/benchmarks.md keeps the current figures only; every run measured so far, with the prose that
reads it, lives in one data file per benchmark and is rendered on demand:

    python benchmarks/render_results.py                      # every benchmark, to stdout
    python benchmarks/render_results.py quick_start          # one (the file's stem)
    python benchmarks/render_results.py --out /tmp/history.md

A data file holds a ``title``, the ``heading`` its section gets, the ``scripts`` that measured it,
and ``[[block]]`` entries in reading order, each exactly one of: ``text`` (Markdown prose),
``command`` (a command line, shown as code) or ``columns`` with ``rows`` (a table, newest row
first). To record a run, add a row at the top of the table (or a new table or text block) and
render to check it.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

HISTORY = Path(__file__).resolve().parent / "results" / "history"
PREAMBLE = """Every measured run, newest first in each table; docs/benchmarks.md has the current figures. Unless a
row says otherwise the machine is the project's standard box: 2 CPU cores, 24 GiB of memory, no GPU,
Python 3.11, llama-cpp-python 0.3.36 built with the README's `CMAKE_ARGS`, idle."""


class Block(BaseModel):
    """One piece of a benchmark's history: prose, a command, or a table."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    command: str | None = None
    columns: list[str] | None = None
    rows: list[list[str]] | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Block:
        kinds = [self.text is not None, self.command is not None, self.columns is not None]
        if sum(kinds) != 1:
            raise ValueError("a block is exactly one of text, command, or columns with rows")
        if (self.columns is None) != (self.rows is None):
            raise ValueError("a table needs both columns and rows")
        for row in self.rows or []:
            if len(row) != len(self.columns or []):
                raise ValueError(f"a row of {len(row)} cells under {len(self.columns or [])} columns: {row}")
        return self

    def markdown(self) -> str:
        if self.text is not None:
            return self.text.strip()
        if self.command is not None:
            return "\n".join(f"    {line}" if line else "" for line in self.command.strip("\n").split("\n"))
        columns, rows = self.columns or [], self.rows or []
        lines = [_row(columns), "|" + "---|" * len(columns), *(_row(row) for row in rows)]
        return "\n".join(lines)


class History(BaseModel):
    """A benchmark's dated runs and the prose that reads them."""

    model_config = ConfigDict(extra="forbid")

    title: str
    heading: str
    scripts: list[str]
    block: list[Block]

    def markdown(self) -> str:
        return "\n\n".join([f"## {self.heading}", *(block.markdown() for block in self.block)]) + "\n"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def load(path: Path) -> History:
    """One data file, validated."""
    return History.model_validate(tomllib.loads(path.read_text()))


def histories(names: list[str] | None = None, folder: Path = HISTORY) -> dict[str, History]:
    """The data files by stem, in name order (every one, or those named)."""
    paths = sorted(folder.glob("*.toml"))
    known = {path.stem: path for path in paths}
    missing = sorted(set(names or []) - set(known))
    if missing:
        raise SystemExit(f"no history for {', '.join(missing)}; known: {', '.join(known)}")
    return {stem: load(path) for stem, path in known.items() if not names or stem in names}


def render(names: list[str] | None = None, folder: Path = HISTORY) -> str:
    """The Markdown of the histories asked for."""
    sections = [history.markdown() for history in histories(names, folder).values()]
    return f"# Benchmark history\n\n{PREAMBLE}\n\n" + "\n".join(sections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to render (data file stems); default: every one")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of stdout")
    args = parser.parse_args()
    text = render(args.names or None)
    if args.out:
        args.out.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
