"""The exporter registry: format name -> exporter, filled by the `exporter` decorator."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from itemsmith.registry import Registry
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


EXPORTERS: Registry[ExporterSpec] = Registry("export format")


def exporter(name: str, *, plots: bool, description: str) -> Callable[[Exporter], Exporter]:
    """Register ``name``; ``plots`` says whether the format can carry PNG plots."""
    return EXPORTERS.register(name, lambda write: ExporterSpec(name=name, write=write, plots=plots,
                                                               description=description))
