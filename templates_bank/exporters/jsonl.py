"""JSONL: ``data.jsonl``, one row a line (series as arrays), plots as ``images/<id>.png``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._registry import exporter
from itemsmith.templates_bank.exporters._rows import ExportRow, record
from itemsmith.templates_bank.releases import ReleaseManifest


@exporter("jsonl", plots=True, description="data.jsonl, one item a line; plots as images/<id>.png")
def write_jsonl(rows: Iterator[ExportRow], manifest: ReleaseManifest, out: Path, options: ExportOptions) -> None:
    images = out / "images"
    with (out / "data.jsonl").open("w", encoding="utf-8", newline="\n") as sink:
        for row in rows:
            line = record(row, options)
            if options.plots:
                line["image"] = None
                if row.image is not None:
                    images.mkdir(exist_ok=True)
                    (images / f"{row.id}.png").write_bytes(row.image)
                    line["image"] = f"images/{row.id}.png"
            sink.write(json.dumps(line, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
            sink.write("\n")
