"""`itemsmith settings`: every environment variable itemsmith reads, from the settings models
themselves (the table in docs/operator.md is this command's `--markdown` output, checked by a test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from itemsmith.cli._common import print_json

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from itemsmith.layer_settings import LayerSettings

__all__ = ["SettingRow", "setting_rows", "settings", "settings_markdown"]

# (layer, "module:class") of each layer's settings model, lowest layer first
SETTINGS_MODELS: tuple[tuple[str, str], ...] = (
    ("sandbox", "itemsmith.sandbox.settings:SandboxSettings"),
    ("verification", "itemsmith.verification.settings:VerificationSettings"),
    ("bank", "itemsmith.templates_bank.settings:BankSettings"),
    ("agents", "itemsmith.agents.settings:AgentSettings"),
    ("service", "itemsmith.service.settings:ServiceSettings"),
)

SettingRow = dict[str, str]


def _models() -> list[tuple[str, type[LayerSettings]]]:
    from itemsmith.registry import LazyTarget

    return [(layer, LazyTarget(target).load()) for layer, target in SETTINGS_MODELS]


def _variables(model: type[LayerSettings], *path: str) -> tuple[str, str]:
    """The variable's names (its own, a provider's: OPENAI_API_KEY) and its old names, each " / "-joined."""
    names = model.variables(*path)
    return " / ".join(names), " / ".join(old for old, new in model.renamed_variables.items() if new == names[0])


def _fields(model: type[LayerSettings]) -> Iterator[tuple[tuple[str, ...], FieldInfo]]:
    """Each variable's field path and field: a section's fields in place of the section."""
    sections = model.sections()
    for name, field in model.model_fields.items():
        if name in sections:
            yield from (((name, inner), info) for inner, info in sections[name].model_fields.items())
        else:
            yield (name,), field


def _default(field: FieldInfo) -> str:
    from pydantic_core import PydanticUndefined

    if field.default is not PydanticUndefined:
        value = field.default
    elif field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
        if not isinstance(value, list | dict | tuple):  # a machine's own value (CPUs, home folder): not a default
            return "(computed)"
    else:
        return "(required)"
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | dict | tuple):
        return json.dumps(list(value) if isinstance(value, tuple) else value, default=str)  # a spec as its text
    return str(value).replace(str(Path.home()), "~")


def setting_rows() -> list[SettingRow]:
    """One row per variable: its name(s), old names, layer, settings model (and section), default and
    description."""
    rows = []
    for layer, model in _models():
        for path, field in _fields(model):
            if path[0] in model.code_only:
                continue
            names, old_names = _variables(model, *path)
            rows.append({"variable": names, "old_names": old_names, "layer": layer,
                         "model": ".".join((model.__name__, *path[:-1])), "default": _default(field),
                         "description": (field.description or "").replace("\n", " ")})
    return rows


def settings_markdown() -> str:
    """The rows as the Markdown table of docs/operator.md."""
    lines = ["| variable | layer | default | meaning |", "|---|---|---|---|"]
    for row in setting_rows():
        default = f"`{row['default']}`" if row["default"] else ""
        meaning = row["description"].replace("|", "\\|")
        was = f" (was `{row['old_names']}`)" if row["old_names"] else ""
        lines.append(f"| `{row['variable']}`{was} | {row['layer']} | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


def settings(
    markdown: Annotated[bool, typer.Option("--markdown", help="The Markdown table of docs/operator.md.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array of rows.")] = False,
) -> None:
    """Every environment variable itemsmith reads, with its layer, default and meaning."""
    if as_json:
        rows: list[Any] = setting_rows()
        print_json(rows)
    elif markdown:
        typer.echo(settings_markdown(), nl=False)
    else:
        for row in setting_rows():
            typer.echo(f"{row['variable']:44} {row['default'][:24]:24} {row['description']}")
