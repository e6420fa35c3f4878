"""The rows every exporter writes: one per item, in release order, built while streaming.

A row's record (`record`) has a fixed key order: identity (``id``, template, version, seed,
index), the template's tags, the item (kind, question, context, options, answer as index,
letter and text, rationale, series as arrays, metadata) and ``prompt``, the text a model reads
(`render_item` in the export's text format: context, series, question, lettered options).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from itemsmith.items.hashing import canonical_json
from itemsmith.items.rendering import (
    TextFormat,
    group_aligned,
    option_letter,
    render_item,
    render_series,
    series_label,
)
from itemsmith.items.schema import Item
from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._plots import ItemPlots
from itemsmith.templates_bank.handler_identity import HandlerRef, handler_ref
from itemsmith.templates_bank.releases import Release, ReleaseTemplate

if TYPE_CHECKING:
    from itemsmith.sandbox import SandboxLimits

__all__ = ["ExportRow", "iter_rows", "parquet_record", "record", "stem"]


@dataclass(frozen=True)
class ExportRow:
    """One item of a release and where it comes from."""

    id: str
    template: ReleaseTemplate
    seed: int
    index: int
    item: Item
    image: bytes | None


def iter_rows(release: Release, options: ExportOptions, *, workers: int = 1,
              limits: SandboxLimits | None = None) -> Iterator[ExportRow]:
    """The release's rows, its items read as stored (checked against its manifest; a release made
    before items were stored: regenerated), with plots drawn once (`ItemPlots`) if asked."""
    plots = ItemPlots(release, options.plot_dpi) if options.plots else None
    for template, run_items in release.items(workers=workers, limits=limits):
        for index, item in enumerate(run_items.items):
            image = plots.png(item) if plots is not None and item.series else None
            yield ExportRow(id=f"{template.template_id}-{run_items.seed}-{index}", template=template,
                            seed=run_items.seed, index=index, item=item, image=image)


def stem(item: Item, fmt: TextFormat, decimals: int) -> str:
    """`render_item` without the lettered options: context, series blocks, question (for tools
    that add the options themselves)."""
    sections = [item.context.strip()] if item.context and item.context.strip() else []
    sections += [f"{series_label(group)}\n{render_series(group, fmt, decimals).rstrip(chr(10))}"
                 for group in group_aligned(item.series)]
    sections.append(item.question.strip())
    return "\n\n".join(sections)


def record(row: ExportRow, options: ExportOptions) -> dict[str, Any]:
    """The row as plain JSON values, keys in a fixed order."""
    item, template = row.item, row.template
    return {
        "id": row.id,
        "template_id": template.template_id,
        "template_version": template.version,
        "seed": row.seed,
        "sample_index": row.index,
        "title": template.title,
        "category": template.category,
        "concepts": list(template.concepts),
        "difficulty": template.difficulty,
        "handler": (template.handler if isinstance(template.handler, HandlerRef)
                    else handler_ref(template.handler)).model_dump(mode="json"),
        "kind": item.kind.value,
        "question": item.question,
        "context": item.context,
        "options": list(item.options),
        "answer_index": item.answer_index,
        "answer": option_letter(item.answer_index),
        "answer_text": item.answer,
        "rationale": item.rationale,
        "series": [{"name": s.name, "unit": s.unit, "derived": s.derived, "values": s.values,
                    "timestamps": s.timestamps}
                   for s in item.series],
        "metadata": item.metadata,
        "prompt": render_item(item, options.text_format, options.decimals),
    }


def parquet_record(row: ExportRow, options: ExportOptions) -> dict[str, Any]:
    """`record` for Arrow: ``metadata`` (free-form) as canonical JSON text, the plot as an
    image struct (Hugging Face's ``Image`` layout)."""
    out = record(row, options)
    out["metadata"] = canonical_json(out["metadata"])
    if options.plots:
        out["image"] = None if row.image is None else {"bytes": row.image, "path": f"{row.id}.png"}
    return out
