"""Model specs, parsed once where they enter.

A spec names a model as text: ``openai:gpt-4o``, ``openai_compatible:qwen2.5-coder@vllm`` (a named
endpoint) or ``...@http://host/v1`` (a URL, the command line only), ``local:NAME``,
``scripted:FILE`` (the providers: `agents.llm.providers`). Every entry point (the authoring request,
the job and API requests, the settings, the command line's options) turns the text into a
`ModelSpec` through `ModelSpecField`, the one caller of `ModelSpec`'s `parse`; everything after it
takes the `ModelSpec`. A spec is written as its text (`str(spec)`), so a JSON request, a stored job,
a checkpoint or a report reads as it did when specs were strings.

A student is a `StudentSpec`: a spec and a capability rank, written ``SPEC@RANK`` (the rank follows
the last ``@``, so a spec may hold one).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from itemsmith.agents.errors import ProviderConfigError

__all__ = ["ENDPOINT_NAME_PATTERN", "MAX_SPEC_LENGTH", "AsText", "ModelSpec", "ModelSpecField", "StudentMode",
           "StudentSpec"]

ENDPOINT_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MAX_SPEC_LENGTH = 500
_ENDPOINT_NAME = re.compile(ENDPOINT_NAME_PATTERN)


class ModelSpec(BaseModel):
    """A parsed spec: provider, model name and, for OpenAI-compatible servers, a named endpoint
    or (command line only) a base URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str
    endpoint: str | None = None
    base_url: str | None = None

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        provider, sep, rest = spec.strip().partition(":")
        if not sep or not provider or not rest:
            raise ProviderConfigError(f"model spec {spec!r} is not 'provider:model' (e.g. openai:gpt-4o, "
                                      "local:qwen2.5-coder-1.5b)")
        if provider != "openai_compatible":
            return cls(provider=provider, model=rest)
        model, at, target = rest.partition("@")
        if target.startswith(("http://", "https://")) and model:
            url = urlsplit(target)
            if url.username or url.password or url.query:  # the message does not echo the spec: it holds a secret
                raise ProviderConfigError("a model's base_url must not carry credentials or a query string: "
                                          "provider keys come from the server's environment")
            return cls(provider=provider, model=model, base_url=target)
        if not at or not model or not _ENDPOINT_NAME.match(target):
            raise ProviderConfigError(f"model spec {spec!r}: use openai_compatible:<model>@<endpoint name> "
                                      "(an endpoint of ITEMSMITH_ENDPOINTS)")
        return cls(provider=provider, model=model, endpoint=target)

    def __str__(self) -> str:
        target = self.endpoint or self.base_url
        return f"{self.provider}:{self.model}" + (f"@{target}" if target else "")


def _parsed(value: Any) -> ModelSpec:
    """A spec's text as a `ModelSpec`; a `ModelSpec` (or its fields) passes as it is."""
    if not isinstance(value, str):
        return ModelSpec.model_validate(value)
    if len(value) > MAX_SPEC_LENGTH:
        raise PydanticCustomError("model_spec", f"a model spec has at most {MAX_SPEC_LENGTH} characters")
    try:
        return ModelSpec.parse(value)
    except ProviderConfigError as exc:  # the reason as the message, without pydantic's "Value error, "
        raise PydanticCustomError("model_spec", "{reason}", {"reason": str(exc)}) from None


@dataclass(frozen=True, eq=False)  # hashed as itself: typing hashes the metadata of an Annotated
class AsText:
    """Pydantic metadata of a type given and written as text: validated by `validate` (text, or the
    value itself), written as ``str(value)``, a string (`json_schema`) in a JSON schema. Its core
    schema holds no model, so a schema lists no model beside the string."""

    validate: Callable[[Any], Any]
    json_schema: dict[str, Any]

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(
            self.validate, serialization=core_schema.plain_serializer_function_ser_schema(
                str, return_schema=core_schema.str_schema()))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return dict(self.json_schema)


ModelSpecField = Annotated[ModelSpec, AsText(_parsed, {
    "type": "string", "minLength": 3, "maxLength": MAX_SPEC_LENGTH, "description": "model spec, e.g. openai:gpt-4o"})]
"""A model spec in a pydantic model: given as its text (or a `ModelSpec`), held parsed, written as its text."""

StudentMode = Literal["auto", "chat", "loglik"]


class StudentSpec(BaseModel):
    """A student: a model spec and its declared capability rank (larger is more capable).

    Written ``SPEC@RANK`` (``local:smollm2-135m@1``). ``auto`` answers by letter log-likelihood
    for local models and by chat (one parsed final letter) otherwise.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: ModelSpecField
    rank: int
    mode: StudentMode = "auto"

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        spec, at, rank = value.strip().rpartition("@")
        try:
            return {"spec": spec, "rank": int(rank)} if at and spec else _bad_student(value)
        except ValueError:
            return _bad_student(value)

    @property
    def resolved_mode(self) -> Literal["chat", "loglik"]:
        if self.mode != "auto":
            return self.mode
        return "loglik" if self.spec.provider == "local" else "chat"

    @property
    def name(self) -> str:
        """The name the student is recorded and compared under: its canonical spec."""
        return str(self.spec)

    def __str__(self) -> str:
        return f"{self.spec}@{self.rank}"


def _bad_student(value: str) -> Any:
    raise ValueError(f"student {value!r} is not SPEC@RANK with an integer rank (e.g. local:smollm2-135m@1)")
