"""``anthropic:MODEL``: Anthropic's API (or a gateway, ``ITEMSMITH_ANTHROPIC_BASE_URL``), key
``ANTHROPIC_API_KEY`` / ``ITEMSMITH_ANTHROPIC_API_KEY``. Extended thinking stays off."""

from __future__ import annotations

from typing import Any

from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.providers.base import ModelOptions
from itemsmith.agents.llm.providers.hosted import HostedProvider, sampling
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy

__all__ = ["AnthropicProvider"]


class AnthropicProvider(HostedProvider):
    name = "anthropic"
    key_variable = "ANTHROPIC_API_KEY"

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        from itemsmith.agents.llm.providers.clients import OwnClientChatAnthropic

        sent = sampling(capabilities, options, settings)
        sent.pop("reasoning_effort", None)  # extended thinking stays off
        extra = {"base_url": settings.anthropic_base_url} if settings.anthropic_base_url else {}
        return OwnClientChatAnthropic(model_name=spec.model, api_key=settings.anthropic_api_key,
                                      default_request_timeout=calls.timeout_s, max_retries=0, stream_usage=True,
                                      **extra, **sent)
