"""``openai_compatible:MODEL@NAME``: a server speaking OpenAI's API (llama.cpp's server, vLLM,
Ollama) that the operator configured by name (``ITEMSMITH_ENDPOINTS``), with its key, its call
policy, its concurrency limit and whether it returns log-probabilities; or, at the command line
only, ``openai_compatible:MODEL@http://host/v1``, sent no credential of this machine."""

from __future__ import annotations

import re
from typing import Any

from pydantic import SecretStr

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.providers.base import MODEL_NAME, ModelOptions, Provider, SpecPolicy, max_tokens, temperature
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy, ModelEndpoint

__all__ = ["OpenAICompatibleProvider"]

_NO_KEY = SecretStr("not-needed")  # the OpenAI client insists on some key; keyless servers ignore it


def _endpoint_names(settings: AgentSettings) -> str:
    names = sorted(settings.endpoints)
    return f"configured: {', '.join(names)}" if names else "none is configured"


class OpenAICompatibleProvider(Provider):
    name = "openai_compatible"

    def check(self, spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings) -> None:
        if spec.base_url is not None and not policy.allow_urls:
            raise ProviderConfigError(
                "a request names an OpenAI-compatible server by its endpoint name, never by URL: "
                f"openai_compatible:<model>@<name> with a name configured by the operator "
                f"({_endpoint_names(settings)}; ITEMSMITH_ENDPOINTS)")
        if spec.endpoint is not None and spec.endpoint not in settings.endpoints:
            raise ProviderConfigError(f"no model endpoint named {spec.endpoint!r} ({_endpoint_names(settings)}; "
                                      "ITEMSMITH_ENDPOINTS)")

    def spec_shape(self, settings: AgentSettings) -> str | None:
        if not settings.endpoints:
            return None
        return f"{MODEL_NAME}@(?:" + "|".join(re.escape(name) for name in sorted(settings.endpoints)) + ")"

    def missing_credentials(self, spec: ModelSpec, settings: AgentSettings) -> str | None:
        endpoint = settings.endpoints.get(spec.endpoint) if spec.endpoint is not None else None
        if endpoint is not None and endpoint.api_key_env is not None and endpoint.api_key() is None:
            return (f"model endpoint {spec.endpoint!r} needs its key in the server environment variable "
                    f"{endpoint.api_key_env}")
        return None

    def _endpoint(self, spec: ModelSpec, settings: AgentSettings) -> ModelEndpoint | None:
        """The named endpoint (None: a URL typed at the command line)."""
        if spec.endpoint is not None:
            endpoint = settings.endpoints.get(spec.endpoint)
            if endpoint is None:
                raise ProviderConfigError(f"no model endpoint named {spec.endpoint!r} (ITEMSMITH_ENDPOINTS)")
            return endpoint
        if spec.base_url is None:
            raise ProviderConfigError(f"{spec}: name an endpoint, openai_compatible:<model>@<endpoint name>")
        return None

    def call_policy(self, spec: ModelSpec, settings: AgentSettings) -> CallPolicy:
        return settings.call_policy(self.name, self._endpoint(spec, settings))

    def concurrency(self, spec: ModelSpec, settings: AgentSettings) -> int | None:
        endpoint = self._endpoint(spec, settings)
        return None if endpoint is None else endpoint.max_concurrency

    def capabilities(self, spec: ModelSpec, settings: AgentSettings) -> Capabilities:
        endpoint = self._endpoint(spec, settings)
        return Capabilities(temperature=True, reasoning=False, logprobs=endpoint is not None and endpoint.logprobs)

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        from itemsmith.agents.llm.providers.clients import CompatibleChatOpenAI, own_async_client

        endpoint = self._endpoint(spec, settings)
        if endpoint is None:  # a URL typed at the command line: sent no credential of this machine
            base_url, key = spec.base_url, _NO_KEY
        else:
            base_url, key = endpoint.base_url, endpoint.api_key() or _NO_KEY
        return CompatibleChatOpenAI(model=spec.model, base_url=base_url, api_key=key, timeout=calls.timeout_s,
                                    max_retries=0, temperature=temperature(options, settings),
                                    max_tokens=max_tokens(options, settings), stream_usage=True,
                                    http_async_client=own_async_client(calls.timeout_s))
