"""The provider registry: one function from a model spec (`agents.llm.spec.ModelSpec`, parsed where it
entered) to a LangChain chat model.

Specs::

    openai:gpt-4o                                   OPENAI_API_KEY / ITEMSMITH_OPENAI_API_KEY
    anthropic:claude-sonnet-4-5                     ANTHROPIC_API_KEY / ITEMSMITH_ANTHROPIC_API_KEY
    openai_compatible:qwen2.5-coder@vllm            a named endpoint (ITEMSMITH_ENDPOINTS), with its key
    openai_compatible:qwen2.5-coder@http://localhost:8000/v1   the command line only: a URL, sent no key
    local:qwen2.5-coder-1.5b                        llama.cpp in-process (extra `local`)
    scripted:script.yaml                            recorded replies (tests only; ITEMSMITH_SCRIPTED_DIR)

What a spec may name is a `SpecPolicy`: the operator at the command line may name any URL and any
script file; a request to the service (`SpecPolicy.service`) only configured endpoints, enabled
providers and scripts inside the scripts folder. Credentials go only to configured endpoints.

`PROVIDERS` maps a provider name to its factory; `@register_provider("name")` adds one.
Clients are built with their own retries off: `agents.llm.inference.complete` is the only
(bounded) retry layer; timeouts and retries come from `AgentSettings.call_policy`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, SecretStr

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities, entry_for
from itemsmith.agents.llm.providers.local import LOCAL_MODELS, get_local_model
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy, get_settings
from itemsmith.registry import Registry

if TYPE_CHECKING:  # `agents.llm.inference` (LangChain) is imported when a model is built, not to check a spec
    from itemsmith.agents.llm.inference import ModelHandle

_NO_KEY = SecretStr("not-needed")  # the OpenAI client insists on some key; keyless servers ignore it


class SpecPolicy(BaseModel):
    """What a spec may name. The operator (the command line) may name any http(s) URL and any
    script file; a service request only what the operator configured (`service`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow_urls: bool
    scripts_anywhere: bool
    providers: frozenset[str] | None = None  # None: every registered provider

    @classmethod
    def operator(cls) -> SpecPolicy:
        return cls(allow_urls=True, scripts_anywhere=True)

    @classmethod
    def service(cls, providers: Collection[str]) -> SpecPolicy:
        """A request's: named endpoints only (never a URL), enabled providers, scripts in the scripts folder."""
        return cls(allow_urls=False, scripts_anywhere=False, providers=frozenset(providers))


def check_spec(spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings | None = None) -> ModelSpec:
    """`spec` if `policy` allows it and what it names exists (a provider, a configured endpoint, a
    known local model, a script file); else `ProviderConfigError`."""
    settings = settings or get_settings()
    PROVIDERS.resolve(spec.provider)
    if policy.providers is not None and spec.provider not in policy.providers:
        raise ProviderConfigError(f"provider {spec.provider!r} is not enabled on this server (enabled: "
                                  f"{', '.join(sorted(policy.providers))}; ITEMSMITH_API_MODEL_PROVIDERS)")
    if spec.base_url is not None and not policy.allow_urls:
        raise ProviderConfigError(
            "a request names an OpenAI-compatible server by its endpoint name, never by URL: "
            f"openai_compatible:<model>@<name> with a name configured by the operator ({_endpoint_names(settings)}; "
            "ITEMSMITH_ENDPOINTS)")
    if spec.endpoint is not None and spec.endpoint not in settings.endpoints:
        raise ProviderConfigError(f"no model endpoint named {spec.endpoint!r} ({_endpoint_names(settings)}; "
                                  "ITEMSMITH_ENDPOINTS)")
    if spec.provider == "local":
        get_local_model(spec.model)
    if spec.provider == "scripted":
        script_path(spec.model, settings, anywhere=policy.scripts_anywhere)
    return spec


_MODEL_NAME = r"[!-?A-~]+"  # a model's (or a script's) name: printable ASCII but "@" (it separates an endpoint, a rank)
# what follows "provider:" in a spec a request may name, by provider (None: nothing can follow)
_SPEC_SHAPES: dict[str, Callable[[AgentSettings], str | None]] = {
    "local": lambda settings: "(?:" + "|".join(re.escape(name) for name in sorted(LOCAL_MODELS)) + ")",
    "openai_compatible": lambda settings: (
        f"{_MODEL_NAME}@(?:" + "|".join(re.escape(name) for name in sorted(settings.endpoints)) + ")"
        if settings.endpoints else None),
    "scripted": lambda settings: _scripts_in(settings.scripted_dir),
}


def _scripts_in(folder: Path | None) -> str | None:
    """The script files a service's request may name: those in its scripts folder, by relative path."""
    if folder is None:
        return None
    root = folder.expanduser().resolve()
    names = sorted(str(path.relative_to(root)) for path in root.rglob("*")
                   if path.is_file() and path.resolve().is_relative_to(root)
                   and re.fullmatch(_MODEL_NAME, str(path.relative_to(root))))
    return "(?:" + "|".join(re.escape(name) for name in names) + ")" if names else None


def spec_pattern(policy: SpecPolicy, settings: AgentSettings | None = None) -> str:
    """A regular expression of the spec texts `policy` lets a request name, as far as the text tells
    (enabled providers, known local models, configured endpoints by name; a script must also exist),
    for a service's API description and its check of a request's text (`policy` must allow no URLs)."""
    assert not policy.allow_urls, "a spec naming a URL has no pattern here"
    settings = settings or get_settings()
    shapes = []
    for provider in sorted(PROVIDERS):
        if policy.providers is not None and provider not in policy.providers:
            continue
        if (shape := _SPEC_SHAPES.get(provider, lambda _: _MODEL_NAME)(settings)) is not None:
            shapes.append(f"{re.escape(provider)}:{shape}")
    return "^(?:" + "|".join(shapes) + ")$" if shapes else "^(?!)$"


def _endpoint_names(settings: AgentSettings) -> str:
    names = sorted(settings.endpoints)
    return f"configured: {', '.join(names)}" if names else "none is configured"


def script_path(name: str, settings: AgentSettings, *, anywhere: bool) -> Path:
    """The script file a `scripted:` spec names: inside `settings.scripted_dir` (symlinks resolved)
    when one is set; any path only when none is set and `anywhere` (the command line)."""
    folder = settings.scripted_dir
    if folder is None:
        if not anywhere:
            raise ProviderConfigError("scripted models read only from the scripts folder, and this server has "
                                      "none (ITEMSMITH_SCRIPTED_DIR)")
        path = Path(name)
    else:
        root = folder.expanduser().resolve()
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            raise ProviderConfigError(f"scripted model {name!r} is outside the scripts folder "
                                      "(ITEMSMITH_SCRIPTED_DIR)")
    if not path.is_file():
        raise ProviderConfigError(f"scripted model: no script file {name!r}")
    return path


class ModelOptions(BaseModel):
    """Per-role sampling options. `max_tokens` is the reply's budget; a reasoning model gets its
    role's reasoning budget on top (`AgentSettings.reasoning_budget`)."""

    temperature: float | None = None
    max_tokens: int | None = None
    role: str = ""


Factory = Callable[[ModelSpec, ModelOptions, AgentSettings], "ModelHandle"]
PROVIDERS: Registry[Factory] = Registry("provider", unknown_error=ProviderConfigError)


def register_provider(name: str) -> Callable[[Factory], Factory]:
    return PROVIDERS.register(name, lambda factory: factory)


def make_model(spec: ModelSpec, *, options: ModelOptions | None = None, settings: AgentSettings | None = None,
               policy: SpecPolicy | None = None) -> ModelHandle:
    """A chat model (with provider, name and call policy) for a spec that `policy` (default: the
    operator's) allows; raises `ProviderConfigError`."""
    settings = settings or get_settings()
    check_spec(spec, policy or SpecPolicy.operator(), settings)
    return PROVIDERS[spec.provider](spec, options or ModelOptions(), settings)


def make_chat_model(spec: ModelSpec, **kwargs: Any) -> Any:
    """Just the LangChain chat model of `make_model`."""
    return make_model(spec, **kwargs).model


def _temperature(options: ModelOptions, settings: AgentSettings) -> float:
    return settings.temperature if options.temperature is None else options.temperature


def _max_tokens(options: ModelOptions, settings: AgentSettings) -> int:
    return settings.max_output_tokens if options.max_tokens is None else options.max_tokens


def _handle(model: Any, provider: str, name: str, calls: CallPolicy, *, max_concurrency: int | None = None,
            capabilities: Capabilities | None = None) -> ModelHandle:
    from itemsmith.agents.llm.inference import ModelHandle

    assert calls.timeout_s is not None and calls.retry_timeouts is not None  # AgentSettings.call_policy sets them
    return ModelHandle(model, provider, name, calls.timeout_s, max_concurrency=max_concurrency,
                       max_retries=calls.max_retries, retry_timeouts=calls.retry_timeouts,
                       capabilities=capabilities or entry_for(provider, name).capabilities)


@cache
def _provider_has_model(provider: str, base_url: str | None, key: str, model: str) -> str | None:
    """For a model the table lacks: the provider's own "no such model" message, None when it has it
    (or cannot say now: the calls will report that). Asked once per process."""
    import anthropic
    import openai

    from itemsmith.agents.llm.inference import redact

    try:
        if provider == "openai":
            openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=10).models.retrieve(model)
        else:
            anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=10).models.retrieve(model)
    except (openai.NotFoundError, anthropic.NotFoundError) as exc:
        return redact(" ".join(str(exc).split()))[:300]
    except Exception:  # noqa: BLE001 - unreachable or not listing models: the calls say more
        return None
    return None


def _known_or_listed(provider: str, model: str, base_url: str | None, key: SecretStr) -> Capabilities:
    """The table's capabilities; a model it lacks must exist at the provider (a clear error before
    any work), then gets the conservative defaults."""
    entry = entry_for(provider, model)
    if not entry.known and (missing := _provider_has_model(provider, base_url, key.get_secret_value(), model)):
        raise ProviderConfigError(f"{provider} has no model {model!r} (not in itemsmith's model table either): "
                                  f"{missing}")
    return entry.capabilities


def _sampling(capabilities: Capabilities, options: ModelOptions, settings: AgentSettings) -> dict[str, Any]:
    """What the model table lets a hosted call send: temperature only where accepted; a reasoning
    model's completion budget holds its role's reasoning tokens, and its effort is set."""
    budget = _max_tokens(options, settings)
    sent: dict[str, Any] = {}
    if capabilities.temperature:
        sent["temperature"] = _temperature(options, settings)
    if capabilities.reasoning:
        budget += settings.reasoning_budget(options.role)
        if settings.reasoning_effort is not None:
            sent["reasoning_effort"] = settings.reasoning_effort
    sent["max_tokens"] = budget
    return sent


def _hosted_key(provider: str, variable: str) -> Callable[[ModelSpec, AgentSettings], str | None]:
    def missing(spec: ModelSpec, settings: AgentSettings) -> str | None:
        if getattr(settings, f"{provider}_api_key") is None:
            return f"{provider} models need {variable} (or ITEMSMITH_{variable})"
        return None

    return missing


def _endpoint_key(spec: ModelSpec, settings: AgentSettings) -> str | None:
    endpoint = settings.endpoints.get(spec.endpoint) if spec.endpoint is not None else None
    if endpoint is not None and endpoint.api_key_env is not None and endpoint.api_key() is None:
        return f"model endpoint {spec.endpoint!r} needs its key in the server environment variable {endpoint.api_key_env}"
    return None


# the credentials a provider's model needs from this machine, checked without building it (None: all
# there); a local model's files: `agents.pipeline.missing_local_model`
_REQUIREMENTS: dict[str, Callable[[ModelSpec, AgentSettings], str | None]] = {
    "openai": _hosted_key("openai", "OPENAI_API_KEY"), "anthropic": _hosted_key("anthropic", "ANTHROPIC_API_KEY"),
    "openai_compatible": _endpoint_key}


def missing_credentials(spec: ModelSpec, settings: AgentSettings | None = None) -> str | None:
    """Why `spec`'s model lacks its credentials here (a hosted provider's key, an endpoint's key);
    None when nothing is missing. Builds nothing and calls nobody, so every role of a run is
    checked in a moment, before any work."""
    check = _REQUIREMENTS.get(spec.provider)
    return None if check is None else check(spec, settings or get_settings())


def _require(spec: ModelSpec, settings: AgentSettings) -> None:
    if (missing := missing_credentials(spec, settings)) is not None:
        raise ProviderConfigError(missing)


@register_provider("openai")
def _openai(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from langchain_openai import ChatOpenAI

    from itemsmith.agents.llm.providers.clients import own_async_client

    _require(spec, settings)
    assert settings.openai_api_key is not None
    calls = settings.call_policy("openai")
    capabilities = _known_or_listed("openai", spec.model, settings.openai_base_url, settings.openai_api_key)
    sent = _sampling(capabilities, options, settings)
    budget = sent.pop("max_tokens")
    model = ChatOpenAI(model=spec.model, api_key=settings.openai_api_key, base_url=settings.openai_base_url,
                       timeout=calls.timeout_s, max_retries=0, max_completion_tokens=budget, stream_usage=True,
                       http_async_client=own_async_client(calls.timeout_s), **sent)
    if not capabilities.temperature:
        model.temperature = None  # LangChain sets temperature=1 on o1 models itself; the table says send none
    return _handle(model, "openai", spec.model, calls, capabilities=capabilities)


@register_provider("anthropic")
def _anthropic(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.llm.providers.clients import OwnClientChatAnthropic

    _require(spec, settings)
    assert settings.anthropic_api_key is not None
    calls = settings.call_policy("anthropic")
    capabilities = _known_or_listed("anthropic", spec.model, settings.anthropic_base_url, settings.anthropic_api_key)
    sent = _sampling(capabilities, options, settings)
    sent.pop("reasoning_effort", None)  # extended thinking stays off
    extra = {"base_url": settings.anthropic_base_url} if settings.anthropic_base_url else {}
    model = OwnClientChatAnthropic(model_name=spec.model, api_key=settings.anthropic_api_key,
                                   default_request_timeout=calls.timeout_s, max_retries=0, stream_usage=True,
                                   **extra, **sent)
    return _handle(model, "anthropic", spec.model, calls, capabilities=capabilities)


@register_provider("openai_compatible")
def _openai_compatible(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.llm.providers.clients import CompatibleChatOpenAI, own_async_client

    if spec.endpoint is not None:
        endpoint = settings.endpoints.get(spec.endpoint)
        if endpoint is None:
            raise ProviderConfigError(f"no model endpoint named {spec.endpoint!r} (ITEMSMITH_ENDPOINTS)")
        _require(spec, settings)
        base_url, key, concurrency = endpoint.base_url, endpoint.api_key() or _NO_KEY, endpoint.max_concurrency
    elif spec.base_url is not None:  # a URL typed at the command line: sent no credential of this machine
        endpoint, base_url, key, concurrency = None, spec.base_url, _NO_KEY, None
    else:
        raise ProviderConfigError(f"{spec}: name an endpoint, openai_compatible:<model>@<endpoint name>")
    calls = settings.call_policy("openai_compatible", endpoint)
    model = CompatibleChatOpenAI(model=spec.model, base_url=base_url, api_key=key, timeout=calls.timeout_s,
                                 max_retries=0, temperature=_temperature(options, settings),
                                 max_tokens=_max_tokens(options, settings), stream_usage=True,
                                 http_async_client=own_async_client(calls.timeout_s))
    capabilities = Capabilities(temperature=True, reasoning=False, logprobs=endpoint is not None and endpoint.logprobs)
    return _handle(model, "openai_compatible", spec.model, calls, max_concurrency=concurrency,
                   capabilities=capabilities)


@register_provider("local")
def _local(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.llm.providers.llamacpp import LlamaCppChatModel
    from itemsmith.agents.llm.providers.local import llama_available, model_path

    entry = get_local_model(spec.model)
    if not llama_available():
        from itemsmith.agents.errors import LocalModelUnavailable

        raise LocalModelUnavailable(f"local model {spec.model!r} needs llama-cpp-python: "
                                    f"pip install 'itemsmith[{entry.extra}]'")
    path = model_path(spec.model, settings.model_cache_dir)
    model = LlamaCppChatModel(model_path=path, model_name=spec.model, n_ctx=settings.local_n_ctx,
                              n_threads=settings.local_n_threads, temperature=_temperature(options, settings),
                              max_tokens=options.max_tokens or settings.local_max_output_tokens,
                              prompt_cache_bytes=settings.local_prompt_cache_mb << 20,
                              prompt_lookup_tokens=settings.local_prompt_lookup_tokens,
                              repeat_stop=settings.local_repeat_stop)
    # One in-process model serves one call at a time; running slots one after the other also keeps each
    # slot's conversation in llama.cpp's prefix cache between its rounds.
    return _handle(model, "local", spec.model, settings.call_policy("local"), max_concurrency=1)


@register_provider("scripted")
def _scripted(spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
    from itemsmith.agents.llm.providers.scripted import ScriptedChatModel

    path = script_path(spec.model, settings, anywhere=settings.scripted_dir is None)
    return _handle(ScriptedChatModel.from_source(path, model_name=path.stem), "scripted", path.name,
                   settings.call_policy("scripted"))
