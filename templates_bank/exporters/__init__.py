"""Exporting a release: JSONL, Hugging Face parquet + card, lm-eval task YAMLs, Inspect AI task.

``export_release(release, "jsonl", out)`` streams the release's stored items (checked against the
manifest; a release made before items were stored is regenerated in the sandbox) through the
format's writer (plots drawn once and cached by item hash, `_plots`) and writes, in every
format, ``manifest.json`` (the release manifest), ``export.json`` (format and options) and
``SHA256SUMS`` (``sha256sum -c`` format). Files are written to a temporary folder beside
``out`` and moved into place at the end, so a failed export leaves nothing behind. The same
release and options give byte-identical files (no timestamps; parquet footers name the
pyarrow version that wrote them).

Formats are registered with the `exporter` decorator; `EXPORTERS` maps name -> spec.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from itemsmith.templates_bank.exporters import huggingface, inspect_task, jsonl, lm_eval  # noqa: F401 - register formats
from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._registry import EXPORTERS, Exporter, ExporterSpec, exporter
from itemsmith.templates_bank.exporters._rows import ExportRow, iter_rows, record
from itemsmith.templates_bank.releases import Release

if TYPE_CHECKING:
    from itemsmith.sandbox import SandboxLimits

__all__ = ["EXPORTERS", "ExportError", "ExportOptions", "ExportReport", "ExportRow", "Exporter", "ExporterSpec",
           "export_release", "exporter", "iter_rows", "record"]

CHECKSUMS = "SHA256SUMS"


class ExportError(ValueError):
    """An export cannot be done as asked (unknown format, plots for a format without them, ...)."""


class ExportReport(BaseModel):
    format: str
    out: Path
    rows: int
    files: dict[str, str]  # relative path -> sha256


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def export_release(release: Release, fmt: str, out: Path, options: ExportOptions | None = None, *,
                   workers: int = 1, limits: SandboxLimits | None = None, overwrite: bool = False,
                   on_row: Callable[[int], None] | None = None) -> ExportReport:
    """Write ``release`` in format ``fmt`` into the folder ``out`` (which must not exist unless
    ``overwrite``); ``on_row(rows so far)`` follows the rows. ``workers`` and ``limits`` are the
    sandbox's for a release made before items were stored. Raises `ExportError`,
    `ReleaseIntegrityError` or `RegenerationError`."""
    options = options or ExportOptions()
    spec = EXPORTERS.get(fmt)
    if spec is None:
        raise ExportError(f"unknown export format {fmt!r}; formats: {', '.join(sorted(EXPORTERS))}")
    if options.plots and not spec.plots:
        with_plots = ", ".join(sorted(name for name, s in EXPORTERS.items() if s.plots))
        raise ExportError(f"format {fmt!r} does not carry plots (formats with plots: {with_plots})")
    if out.exists() and not overwrite:
        raise ExportError(f"{out} exists; choose a new folder, or overwrite it (--force)")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    counted = 0

    def counting(rows: Iterator[ExportRow]) -> Iterator[ExportRow]:
        nonlocal counted
        for row in rows:
            counted += 1
            if on_row is not None:
                on_row(counted)
            yield row

    try:
        spec.write(counting(iter_rows(release, options, workers=workers, limits=limits)), release.manifest,
                   staging, options)
        (staging / "manifest.json").write_text(release.manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
        export_info = {"format": fmt, "release": release.manifest.ref, "checksum": release.manifest.checksum,
                       "options": options.model_dump(mode="json")}
        (staging / "export.json").write_text(json.dumps(export_info, indent=2) + "\n", encoding="utf-8")
        files = {p.relative_to(staging).as_posix(): _sha256(p)
                 for p in sorted(staging.rglob("*")) if p.is_file()}
        (staging / CHECKSUMS).write_text("".join(f"{h}  {name}\n" for name, h in files.items()), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExportReport(format=fmt, out=out, rows=counted, files=files)
