"""The exporter registry: format name -> exporter, filled by the `exporter` decorator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._rows import ExportRow
from itemsmith.templates_bank.releases import ReleaseManifest

__all__ = ["EXPORTERS", "Exporter", "ExporterSpec", "exporter"]


class Exporter(Protocol):
    def __call__(self, rows: Iterator[ExportRow], manifest: ReleaseManifest, out: Path,
                 options: ExportOptions) -> None:
        """Write every row (consumed once, in order) and the format's own files into ``out``."""


@dataclass(frozen=True)
class ExporterSpec:
    name: str
    write: Exporter
    plots: bool
    description: str


EXPORTERS: dict[str, ExporterSpec] = {}


def exporter(name: str, *, plots: bool, description: str) -> Callable[[Exporter], Exporter]:
    """Register ``name``; ``plots`` says whether the format can carry PNG plots."""

    def register(write: Exporter) -> Exporter:
        if name in EXPORTERS:
            raise ValueError(f"exporter {name!r} is registered twice")
        EXPORTERS[name] = ExporterSpec(name=name, write=write, plots=plots, description=description)
        return write

    return register
