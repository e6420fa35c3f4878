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

`PROVIDERS` maps a provider name to its `Provider` (`base`), one module each, imported when a
spec first names it; `@register_provider` adds a `Provider` class by its name. Clients are built
with their own retries off: `agents.llm.inference.complete` is the only (bounded) retry layer;
timeouts and retries come from `AgentSettings.call_policy`.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.providers.base import ModelOptions, Provider, SpecPolicy
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, get_settings
from itemsmith.registry import LazyTarget, Registry

if TYPE_CHECKING:
    from itemsmith.agents.llm.inference import ModelHandle

__all__ = ["PROVIDERS", "ModelOptions", "Provider", "SpecPolicy", "check_spec", "make_chat_model", "make_model",
           "missing_credentials", "provider", "register_provider", "spec_pattern"]

P = TypeVar("P", bound=type[Provider])

PROVIDERS: Registry[Provider | LazyTarget] = Registry("provider", unknown_error=ProviderConfigError)
for _name, _target in {"openai": "openai:OpenAIProvider", "anthropic": "anthropic:AnthropicProvider",
                       "openai_compatible": "openai_compatible:OpenAICompatibleProvider",
                       "local": "local:LocalProvider", "scripted": "scripted:ScriptedProvider"}.items():
    PROVIDERS.add(_name, LazyTarget(f"{__name__}.{_target}"))


def register_provider(cls: P) -> P:
    """A class decorator: registers a `Provider` under its `name`."""
    PROVIDERS.add(cls.name, cls())
    return cls


def provider(name: str) -> Provider:
    """The provider `name`; `ProviderConfigError` naming the known ones when there is none."""
    entry = PROVIDERS.resolve(name)
    return _loaded(entry) if isinstance(entry, LazyTarget) else entry


@cache
def _loaded(target: LazyTarget) -> Provider:
    instance: Provider = target.load()()
    return instance


def check_spec(spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings | None = None) -> ModelSpec:
    """`spec` if `policy` allows it and what it names exists (a provider, a configured endpoint, a
    known local model, a script file); else `ProviderConfigError`."""
    settings = settings or get_settings()
    named = provider(spec.provider)
    if policy.providers is not None and spec.provider not in policy.providers:
        raise ProviderConfigError(f"provider {spec.provider!r} is not enabled on this server (enabled: "
                                  f"{', '.join(sorted(policy.providers))}; ITEMSMITH_API_MODEL_PROVIDERS)")
    named.check(spec, policy, settings)
    return spec


def spec_pattern(policy: SpecPolicy, settings: AgentSettings | None = None) -> str:
    """A regular expression of the spec texts `policy` lets a request name, as far as the text tells
    (enabled providers, known local models, configured endpoints by name; a script must also exist),
    for a service's API description and its check of a request's text (`policy` must allow no URLs)."""
    assert not policy.allow_urls, "a spec naming a URL has no pattern here"
    settings = settings or get_settings()
    shapes = []
    for name in sorted(PROVIDERS):
        if policy.providers is not None and name not in policy.providers:
            continue
        if (shape := provider(name).spec_shape(settings)) is not None:
            shapes.append(f"{re.escape(name)}:{shape}")
    return "^(?:" + "|".join(shapes) + ")$" if shapes else "^(?!)$"


def make_model(spec: ModelSpec, *, options: ModelOptions | None = None, settings: AgentSettings | None = None,
               policy: SpecPolicy | None = None) -> ModelHandle:
    """A chat model (with provider, name and call policy) for a spec that `policy` (default: the
    operator's) allows; raises `ProviderConfigError`."""
    settings = settings or get_settings()
    check_spec(spec, policy or SpecPolicy.operator(), settings)
    return provider(spec.provider).build(spec, options or ModelOptions(), settings)


def make_chat_model(spec: ModelSpec, **kwargs: Any) -> Any:
    """Just the LangChain chat model of `make_model`."""
    return make_model(spec, **kwargs).model


def missing_credentials(spec: ModelSpec, settings: AgentSettings | None = None) -> str | None:
    """Why `spec`'s model lacks its credentials here (a hosted provider's key, an endpoint's key);
    None when nothing is missing (a local model's files: `providers.local.missing_local_model`).
    Builds nothing and calls nobody, so every role of a run is checked in a moment, before any work."""
    if spec.provider not in PROVIDERS:
        return None
    return provider(spec.provider).missing_credentials(spec, settings or get_settings())
