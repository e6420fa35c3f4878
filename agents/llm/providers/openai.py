"""``openai:MODEL``: OpenAI's API (or a gateway speaking it, ``ITEMSMITH_OPENAI_BASE_URL``), key
``OPENAI_API_KEY`` / ``ITEMSMITH_OPENAI_API_KEY``."""

from __future__ import annotations

from typing import Any

from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.providers.base import ModelOptions
from itemsmith.agents.llm.providers.hosted import HostedProvider, sampling
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy

__all__ = ["OpenAIProvider"]


class OpenAIProvider(HostedProvider):
    name = "openai"
    key_variable = "OPENAI_API_KEY"

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        from langchain_openai import ChatOpenAI

        from itemsmith.agents.llm.providers.clients import own_async_client

        sent = sampling(capabilities, options, settings)
        budget = sent.pop("max_tokens")
        model = ChatOpenAI(model=spec.model, api_key=settings.openai_api_key, base_url=settings.openai_base_url,
                           timeout=calls.timeout_s, max_retries=0, max_completion_tokens=budget, stream_usage=True,
                           http_async_client=own_async_client(calls.timeout_s), **sent)
        if not capabilities.temperature:
            model.temperature = None  # LangChain sets temperature=1 on o1 models itself; the table says send none
        return model
