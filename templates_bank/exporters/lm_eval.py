"""lm-evaluation-harness tasks: two task YAMLs over the same parquet data.

- ``<task>.yaml``: ``output_type: multiple_choice`` (log-likelihood of each option's letter after
  the prompt, ``acc``), for backends with log-probabilities: what ``itemsmith release evaluate``
  does with a model that gives them.
- ``<task>_gen.yaml``: ``output_type: generate_until`` scored by ``process_results`` in
  ``itemsmith_answers.py`` (``acc``): the reply read as ``itemsmith release evaluate`` reads it (the
  last final-answer cue such as "Answer: C", a bare letter, or the one letter marked as an option,
  as in "A) day 4"), for chat backends without log-probabilities.

The YAMLs load the data next to them (``custom_dataset`` pointing at ``itemsmith_data.py``), so
the folder can be moved: ``lm_eval --include_path DIR --tasks <task>,<task>_gen --model ...``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from itemsmith.items.schema import MAX_OPTIONS
from itemsmith.templates_bank.exporters._answer_rule import ANSWER_MODULE, answer_module
from itemsmith.templates_bank.exporters._options import ExportOptions
from itemsmith.templates_bank.exporters._parquet import write_parquet
from itemsmith.templates_bank.exporters._registry import exporter
from itemsmith.templates_bank.exporters._rows import ExportRow
from itemsmith.templates_bank.releases import ReleaseManifest

if TYPE_CHECKING:
    import yaml

__all__ = ["task_configs", "task_name"]

LETTERS = [chr(ord("A") + i) for i in range(MAX_OPTIONS)]
INSTRUCTION = ("Think step by step if you need to, then end your reply with a line of the form "
               "\"Answer: X\", where X is the letter of the correct option.")
LOADER = '''"""Loads the parquet files next to this file for the itemsmith task YAMLs (``custom_dataset``)."""

from pathlib import Path

import datasets


def load(**_: object) -> datasets.DatasetDict:
    files = sorted(str(p) for p in (Path(__file__).parent / "data").glob("test-*.parquet"))
    return datasets.load_dataset("parquet", data_files={"test": files})
'''


class _Function(str):
    """A ``!function module.name`` reference in an lm-eval YAML."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


@cache
def _dumper() -> type[yaml.SafeDumper]:
    """The YAML dumper of the task configs (yaml is imported by the formats that write YAML, when they do)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    Dumper.add_representer(_Function, lambda dumper, value: dumper.represent_scalar("!function", str(value)))
    Dumper.add_representer(str, _str)
    return Dumper


def task_name(manifest: ReleaseManifest) -> str:
    return "itemsmith_" + re.sub(r"[^a-z0-9]+", "_", f"{manifest.bank}_r{manifest.release}")


def task_configs(manifest: ReleaseManifest) -> dict[str, dict[str, Any]]:
    """The two task configs by file name."""
    name = task_name(manifest)
    common: dict[str, Any] = {
        "tag": ["itemsmith"],
        "custom_dataset": _Function("itemsmith_data.load"),
        "test_split": "test",
    }
    metadata = {"version": manifest.release, "release": manifest.ref, "checksum": manifest.checksum}
    loglik = {
        "task": name, **common,
        "output_type": "multiple_choice",
        "doc_to_text": "{{prompt}}\nAnswer:",
        "doc_to_choice": "{{" + repr(LETTERS) + "[:options|length]}}",
        "doc_to_target": "{{answer_index}}",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": metadata,
    }
    generative = {
        "task": f"{name}_gen", **common,
        "output_type": "generate_until",
        "doc_to_text": "{{prompt}}\n\n" + INSTRUCTION,
        "doc_to_target": "{{answer}}",
        "generation_kwargs": {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": 1024},
        "process_results": _Function(f"{Path(ANSWER_MODULE).stem}.process_results"),
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": metadata,
    }
    return {f"{name}.yaml": loglik, f"{name}_gen.yaml": generative}


@exporter("lm-eval", plots=False,
          description="lm-evaluation-harness task YAMLs (multiple_choice and generate_until) over data/*.parquet")
def write_lm_eval(rows: Iterator[ExportRow], manifest: ReleaseManifest, out: Path, options: ExportOptions) -> None:
    import yaml

    write_parquet(rows, out / "data", manifest.counts.items, options)
    (out / "itemsmith_data.py").write_text(LOADER, encoding="utf-8", newline="\n")
    (out / ANSWER_MODULE).write_text(answer_module(), encoding="utf-8", newline="\n")
    for filename, config in task_configs(manifest).items():
        text = yaml.dump(config, Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=1000)
        (out / filename).write_text(text, encoding="utf-8", newline="\n")
