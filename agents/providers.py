"""The provider registry: one function from a model spec to a LangChain chat model.

Specs::

    openai:gpt-4o                                   OPENAI_API_KEY / ITEMSMITH_OPENAI_API_KEY
    anthropic:claude-sonnet-4-5                     ANTHROPIC_API_KEY / ITEMSMITH_ANTHROPIC_API_KEY
    openai_compatible:qwen2.5-coder@http://localhost:8000/v1   vLLM, Ollama, llama.cpp server
    local:qwen2.5-coder-1.5b                        llama.cpp in-process (extra `local`)
    scripted:path/to/script.yaml                    recorded replies (tests only)

`PROVIDERS` maps a provider name to its factory; `@register_provider("name")` adds one.
Clients are built with their own retries off: `agents.inference.complete` is the only
(bounded) retry layer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.inference import ModelHandle
from itemsmith.agents.settings import AgentSettings, get_settings


class ModelSpec(BaseModel):
    """A parsed spec: provider, model name and (OpenAI-compatible servers) a base URL."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str
    base_url: str | None = None

    @classmethod
    def parse(cls, spec: str) -> ModelSpec:
        provider, sep, rest = spec.strip().partition(":")
        if not sep or not provider or not rest:
            raise ProviderConfigError(f"model spec {spec!r} is not 'provider:model' "
                                      f"(providers: {', '.join(sorted(PROVIDERS))})")
        base_url = None
        if provider == "openai_compatible":
            model, at, base_url = rest.partition("@")
            if not at or not model or not base_url.startswith(("http://", "https://")):
                raise ProviderConfigError(f"model spec {spec!r}: use openai_compatible:<model>@<http(s) base_url>")
            rest = model
        return cls(provider=provider, model=rest, base_url=base_url)

    def __str__(self) -> str:
        tail = f"@{self.base_url}" if self.base_url else ""
        return f"{self.provider}:{self.model}{tail}"


class ModelOptions(BaseModel):
    """Per-role sampling options."""

    temperature: float | None = None
    max_tokens: int | None = None


Factory = Callable[[ModelSpec, ModelOptions, AgentSettings], ModelHandle]
PROVIDERS: dict[str, Factory] = {}


def register_provider(name: str) -> Callable[[Factory], Factory]:
    def decorate(factory: Factory) -> Factory:
        PROVIDERS[name] = factory
        return factory
    return decorate


def make_model(spec: str | ModelSpec, *, options: ModelOptions | None = None,
               settings: AgentSettings | None = None) -> ModelHandle:
    """A chat model (with provider, name and timeout) for a spec; raises `ProviderConfigError`."""
    parsed = spec if isinstance(spec, ModelSpec) else ModelSpec.parse(spec)
    factory = PROVIDERS.get(parsed.provider)
    if factory is None:
        raise ProviderConfigError(f"unknown provider {parsed.provider!r}; known: {', '.join(sorted(PROVIDERS))}")
    return factory(parsed, options or ModelOptions(), settings or get_settings())


def make_chat_model(spec: str | ModelSpec, **kwargs: Any) -> Any:
    """Just the LangChain chat model of `make_model`."""
    return make_model(spec, **kwargs).model


def _temperature(options: ModelOptions, settings: AgentSettings) -> float:
    return settings.temperature if options.temperature is None else options.temperature


def _max_tokens(options: ModelOptions, settings: AgentSettings) -> int:
    return settings.max_output_tokens if options.max_tokens is None else options.max_tokens


@register_provider("openai")
def _openai(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from langchain_openai import ChatOpenAI  # noqa: PLC0415

    if settings.openai_api_key is None:
        raise ProviderConfigError("openai models need OPENAI_API_KEY (or ITEMSMITH_OPENAI_API_KEY)")
    model = ChatOpenAI(model=spec.model, api_key=settings.openai_api_key, timeout=settings.request_timeout_s,
                       max_retries=0, temperature=_temperature(options, settings),
                       max_completion_tokens=_max_tokens(options, settings), stream_usage=True)
    return ModelHandle(model, "openai", spec.model, settings.request_timeout_s)


@register_provider("anthropic")
def _anthropic(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from langchain_anthropic import ChatAnthropic  # noqa: PLC0415

    if settings.anthropic_api_key is None:
        raise ProviderConfigError("anthropic models need ANTHROPIC_API_KEY (or ITEMSMITH_ANTHROPIC_API_KEY)")
    model = ChatAnthropic(model_name=spec.model, api_key=settings.anthropic_api_key,
                          default_request_timeout=settings.request_timeout_s, max_retries=0,
                          temperature=_temperature(options, settings), max_tokens=_max_tokens(options, settings))
    return ModelHandle(model, "anthropic", spec.model, settings.request_timeout_s)


@register_provider("openai_compatible")
def _openai_compatible(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from langchain_openai import ChatOpenAI  # noqa: PLC0415
    from pydantic import SecretStr  # noqa: PLC0415

    key = settings.openai_compatible_api_key or SecretStr("not-needed")
    model = ChatOpenAI(model=spec.model, base_url=spec.base_url, api_key=key, timeout=settings.request_timeout_s,
                       max_retries=0, temperature=_temperature(options, settings),
                       max_tokens=_max_tokens(options, settings), stream_usage=True)
    return ModelHandle(model, "openai_compatible", spec.model, settings.request_timeout_s)


@register_provider("local")
def _local(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.llamacpp import LlamaCppChatModel, llama_available  # noqa: PLC0415
    from itemsmith.agents.local_models import get_local_model, model_path  # noqa: PLC0415

    entry = get_local_model(spec.model)
    if not llama_available():
        from itemsmith.agents.errors import LocalModelUnavailable  # noqa: PLC0415

        raise LocalModelUnavailable(f"local model {spec.model!r} needs llama-cpp-python: "
                                    f"pip install 'itemsmith[{entry.extra}]'")
    path = model_path(spec.model, settings.model_cache_dir)
    model = LlamaCppChatModel(model_path=path, model_name=spec.model, n_ctx=settings.local_n_ctx,
                              n_threads=settings.local_n_threads, temperature=_temperature(options, settings),
                              max_tokens=options.max_tokens or settings.local_max_output_tokens)
    # One in-process model serves one call at a time; running slots one after the other also keeps each
    # slot's conversation in llama.cpp's prefix cache between its rounds.
    return ModelHandle(model, "local", spec.model, settings.local_timeout_s, max_concurrency=1)


@register_provider("scripted")
def _scripted(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.scripted import ScriptedChatModel  # noqa: PLC0415

    path = Path(spec.model)
    if not path.is_file():
        raise ProviderConfigError(f"scripted model: no script file {spec.model!r}")
    return ModelHandle(ScriptedChatModel.from_source(path, model_name=path.stem), "scripted", path.name,
                       settings.request_timeout_s)
