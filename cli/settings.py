"""`itemsmith settings`: every environment variable itemsmith reads, from the settings models
themselves (the table in docs/operator.md is this command's `--markdown` output, checked by a test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from itemsmith.cli._common import print_json

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

__all__ = ["SettingRow", "setting_rows", "settings", "settings_markdown"]

# (layer, "module:class") of every settings model, lowest layer first
SETTINGS_MODELS: tuple[tuple[str, str], ...] = (
    ("sandbox", "itemsmith.sandbox.settings:SandboxLimits"),
    ("sandbox", "itemsmith.sandbox.render:RenderLimits"),
    ("verification", "itemsmith.verification.audit.config:AuditConfig"),
    ("verification", "itemsmith.verification.rederivation:RederivationConfig"),
    ("bank", "itemsmith.templates_bank.settings:StorageSettings"),
    ("bank", "itemsmith.templates_bank.diversity:DiversitySettings"),
    ("agents", "itemsmith.agents.settings:AgentSettings"),
    ("service", "itemsmith.service.settings:ServiceSettings"),
)

SettingRow = dict[str, str]


def _models() -> list[tuple[str, type[BaseSettings]]]:
    from itemsmith.registry import LazyTarget

    return [(layer, LazyTarget(target).load()) for layer, target in SETTINGS_MODELS]


def _variables(model: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    alias = field.validation_alias
    choices = getattr(alias, "choices", None) or ([alias] if isinstance(alias, str) else [])
    named = [c for c in choices if isinstance(c, str) and c.isupper()]
    return named or [f"{model.model_config.get('env_prefix', '')}{name}".upper()]


def _default(field: FieldInfo) -> str:
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
    """One row per variable: its name(s), layer, settings model, default and description."""
    from itemsmith.service.settings import CODE_ONLY, ServiceSettings

    rows = []
    for layer, model in _models():
        for name, field in model.model_fields.items():
            if model is ServiceSettings and name in CODE_ONLY:
                continue
            rows.append({"variable": " / ".join(_variables(model, name, field)), "layer": layer,
                         "model": model.__name__, "default": _default(field),
                         "description": (field.description or "").replace("\n", " ")})
    return rows


def settings_markdown() -> str:
    """The rows as the Markdown table of docs/operator.md."""
    lines = ["| variable | layer | default | meaning |", "|---|---|---|---|"]
    for row in setting_rows():
        default = f"`{row['default']}`" if row["default"] else ""
        meaning = row["description"].replace("|", "\\|")
        lines.append(f"| `{row['variable']}` | {row['layer']} | {default} | {meaning} |")
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
