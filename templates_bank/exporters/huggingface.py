"""Hugging Face dataset: parquet shards under ``data/`` and a dataset card (``README.md``) whose
YAML front matter declares the ``test`` split; the card also carries the manifest. Loads with
``datasets.load_dataset("parquet", data_files="data/*.parquet")`` or from the Hub as a repo."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from itemsmith.templates_bank.exporters._markdown import markdown_code, markdown_text
from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._parquet import write_parquet
from itemsmith.templates_bank.exporters._registry import exporter
from itemsmith.templates_bank.exporters._rows import ExportRow
from itemsmith.templates_bank.handler_identity import handler_label
from itemsmith.templates_bank.releases import ReleaseManifest

_SIZES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))


def _size_category(n: int) -> str:
    return next((label for bound, label in _SIZES if n < bound), "1M<n<10M")


def dataset_card(manifest: ReleaseManifest, options: ExportOptions) -> str:
    """README.md: YAML front matter for the Hub, then what the dataset is and its manifest. The
    bank's text (task, names, categories) is written as text, never as Markdown or HTML
    (`exporters._markdown`); the front matter is YAML that `yaml.safe_dump` quotes."""
    import yaml  # here, not with every format

    front = {
        "pretty_name": f"itemsmith {manifest.ref}",
        "license": options.license,
        "task_categories": ["question-answering", "multiple-choice"],
        "tags": ["time-series", "benchmark", "itemsmith"],
        "size_categories": [_size_category(manifest.counts.items)],
        "configs": [{"config_name": "default", "data_files": [{"split": "test", "path": "data/test-*.parquet"}]}],
    }
    categories = "\n".join(f"| {markdown_text(name)} | {c.templates} | {c.items} |"
                           for name, c in manifest.counts.by_category.items())
    templates = "\n".join(
        f"| {markdown_code(t.template_id, in_table=True)} | {markdown_code(t.version[:12], in_table=True)} | "
        f"{markdown_text(t.category)} | {t.items} | "
        + (f"{t.irt.discrimination:.2f} / {t.irt.difficulty:.2f}" if t.irt else "-") + " |"
        for t in manifest.templates)
    plots = ("`image` holds a PNG plot of the series." if options.plots else "")
    task = f"\n\nTask: {markdown_text(manifest.task)}" if manifest.task.strip() else ""
    static = sum(1 for t in manifest.templates if t.kind == "static")
    origin = ("regenerated in the itemsmith sandbox from the template sources and seeds in the manifest" if not static
              else f"{'all' if static == len(manifest.templates) else static} of the groups stored items imported "
                   "from an existing benchmark (not generated; checked against the manifest's hashes)")
    return f"""---
{yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)}---

# itemsmith benchmark {markdown_code(manifest.ref)}

Time-series reasoning items from bank {markdown_code(manifest.bank)} (handler {markdown_code(handler_label(manifest.handler))}), release
{manifest.release}: {manifest.counts.templates} templates, {manifest.counts.items} multiple-choice items,
{origin}.{task}

Content checksum: {markdown_code(manifest.checksum)}

## Loading

```python
import datasets
ds = datasets.load_dataset("parquet", data_files={{"test": "data/test-*.parquet"}})["test"]
```

## Fields

One row per item: `id` (`<template>-<seed>-<index>`), `template_id`, `template_version` (sha256 of
the template source), `seed`, `sample_index`, `title`, `category`, `concepts`, `difficulty`,
`handler`, `kind` (`mc`, `tf`, `pz`), `question`, `context`, `options`, `answer_index`, `answer`
(letter), `answer_text`, `rationale`, `series` (list of `name`, `unit`, `values`, `timestamps`),
`metadata` (JSON text) and `prompt` (the item as a model reads it: series in the `{options.text_format.value}`
format with {options.decimals} decimals, question, lettered options). {plots}

## Counts

| category | templates | items |
|---|---|---|
{categories}

## Templates

| template | version | category | items | IRT a / b |
|---|---|---|---|---|
{templates}

## Manifest

```json
{json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False)}
```
"""


@exporter("hf", plots=True, description="Hugging Face dataset: data/*.parquet and a dataset card (README.md)")
def write_hf(rows: Iterator[ExportRow], manifest: ReleaseManifest, out: Path, options: ExportOptions) -> None:
    write_parquet(rows, out / "data", manifest.counts.items, options)
    (out / "README.md").write_text(dataset_card(manifest, options), encoding="utf-8", newline="\n")
