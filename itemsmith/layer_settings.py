"""The base of every layer's settings model, and the rule that names their variables.

Each layer that reads the environment has one settings model: ``<layer>/settings.py``'s
``<Layer>Settings`` (`SandboxSettings`, `VerificationSettings`, `BankSettings`, `AgentSettings`,
`ServiceSettings`). A variable is ``ITEMSMITH_`` followed by its field's path: a layer's general
fields sit at the top (``ITEMSMITH_GENERATOR``), a subsystem's fields in a section, a nested model
whose name is the next part (``ITEMSMITH_AUDIT_ALPHA`` is ``VerificationSettings().audit.alpha``).
A layer whose fields are all one subsystem's takes the section as its prefix (the service:
``ITEMSMITH_API_*``). A section refuses a variable it does not have, so a misspelt limit is an
error, not a default. A renamed variable is still read, with a warning that names the new one.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
from collections.abc import Mapping
from types import UnionType
from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

__all__ = ["InvalidSettings", "LayerSettings"]

PREFIX = "ITEMSMITH_"
log = logging.getLogger("itemsmith.settings")
_warned: set[str] = set()  # each renamed variable is reported once per process


class InvalidSettings(ValueError):
    """A variable the settings cannot use: malformed, out of bounds, or not a setting of its section."""


class LayerSettings(BaseSettings):
    """A layer's settings: read from ``ITEMSMITH_*`` variables by the naming rule above."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_nested_delimiter="_", env_nested_max_split=1,
                                      extra="ignore")

    renamed_variables: ClassVar[Mapping[str, str]] = {}  # old variable name -> its field's variable name
    code_only: ClassVar[frozenset[str]] = frozenset()  # fields only code sets, never a variable

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise InvalidSettings("; ".join(self._explain(error) for error in exc.errors())) from None
        except SettingsError as exc:  # a list, mapping or tuple whose variable is not JSON
            raise InvalidSettings(self._not_json(str(exc))) from None

    @classmethod
    def variables(cls, *path: str) -> list[str]:
        """The variables a field is read from (``variables("audit", "alpha")``): its own name, or
        its aliases when it has them (a provider's ``OPENAI_API_KEY``)."""
        field = cls.model_fields.get(path[0])
        choices = getattr(field.validation_alias, "choices", None) if field is not None else None
        named = [choice for choice in choices or () if isinstance(choice, str) and choice.isupper()]
        if len(path) == 1 and named:
            return named
        return [(str(cls.model_config.get("env_prefix", "")) + "_".join(path)).upper()]

    @classmethod
    def variable(cls, *path: str) -> str:
        """The variable of a field, the first of `variables`."""
        return cls.variables(*path)[0]

    @classmethod
    def _explain(cls, error: Any) -> str:
        path = tuple(str(part) for part in error["loc"])
        if not path:  # a check of the whole model
            return str(error["msg"])
        if path[0].isupper():  # validated under its alias (OPENAI_API_KEY): that is the variable
            return f"{path[0]}: {error['msg']}"
        name = cls.variable(*path[:2 if path[0] in cls.sections() else 1])  # not an item of a list field
        if error["type"] != "extra_forbidden" or len(path) != 2:
            return f"{name}: {error['msg']}"
        section = cls.model_fields[path[0]].annotation
        known = [cls.variable(path[0], field) for field in getattr(section, "model_fields", {})]
        close = difflib.get_close_matches(name, known, n=1)
        return f"{name}: not a setting" + (f" (did you mean {close[0]}?)" if close else "")

    @classmethod
    def _not_json(cls, message: str) -> str:
        found = re.search(r'field "([^"]+)"', message)
        if found is None or found.group(1) not in cls.model_fields:
            return message
        name = found.group(1)
        section = cls.sections().get(name)
        fields = {(name, inner): info for inner, info in section.model_fields.items()} if section else \
            {(name,): cls.model_fields[name]}
        read = [cls.variable(*path) for path, info in fields.items() if _complex(info.annotation)]
        bad = [f"{variable}: not JSON ({os.environ[variable]!r})" for variable in read
               if variable in os.environ and not _is_json(os.environ[variable])]
        return "; ".join(bad) or message

    @classmethod
    def sections(cls) -> dict[str, type[BaseModel]]:
        """The fields that are sections, by name."""
        return {name: field.annotation for name, field in cls.model_fields.items()
                if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)}

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        if isinstance(env_settings, EnvSettingsSource):
            _read_renamed(env_settings, cls.renamed_variables)
        environment = (env_settings, dotenv_settings, file_secret_settings)
        return init_settings, *(_WithoutCodeOnly(source, cls.code_only) for source in environment)


class _WithoutCodeOnly(PydanticBaseSettingsSource):
    """An environment, dotenv or secrets source that never sets a code-only field."""

    def __init__(self, source: PydanticBaseSettingsSource, code_only: frozenset[str]) -> None:
        super().__init__(source.settings_cls)
        self.source, self.code_only = source, code_only

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self.source.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        return {name: value for name, value in self.source().items() if name not in self.code_only}


def _complex(annotation: Any) -> bool:
    """Whether a field's variable is read as JSON (a list, tuple, set, mapping or model)."""
    if get_origin(annotation) in (Union, UnionType):
        return any(_complex(arg) for arg in get_args(annotation) if arg is not type(None))
    kind = get_origin(annotation) or annotation
    return kind in (list, tuple, set, frozenset, dict) or (isinstance(kind, type) and issubclass(kind, BaseModel))


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return False
    return True


def _read_renamed(source: EnvSettingsSource, renamed: Mapping[str, str]) -> None:
    """Move each old variable the environment sets to its new name (the new name wins when both are set)."""
    for old, new in renamed.items():
        key = old if source.case_sensitive else old.lower()
        if key not in source.env_vars:
            continue
        values = dict(source.env_vars)
        value = values.pop(key)
        values.setdefault(new if source.case_sensitive else new.lower(), value)
        source.env_vars = values
        if old not in _warned:
            _warned.add(old)
            log.warning("%s is renamed %s; it is read for now, set %s instead", old, new, new)
