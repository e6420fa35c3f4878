"""LangChain chat models as itemsmith builds them for hosted and self-hosted APIs.

- `CompatibleChatOpenAI`, for OpenAI-compatible servers (llama.cpp's server, vLLM, Ollama):
  LangChain's `ChatOpenAI` sends the reply cap as ``max_completion_tokens`` (OpenAI's current
  name); llama.cpp's server ignores that field (asked for 8 tokens, it wrote 17), so a capped call
  ran uncapped and held a single-slot server until the timeout. These servers read ``max_tokens``.
- Every model gets an HTTP client of its own (`own_async_client`, `OwnClientChatAnthropic`):
  LangChain shares one cached async client per base URL across the process, whose connections
  belong to the event loop that opened them, so a model built for a later loop (the next job in a
  worker, the next run in a process) failed with "Event loop is closed".
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import anthropic
import openai
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI


def own_async_client(timeout_s: float | None) -> Any:
    """A fresh async HTTP client for one OpenAI model (the SDK's defaults: limits, redirects)."""
    return openai.DefaultAsyncHttpxClient(timeout=timeout_s)


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` that sends the cap as ``max_tokens``."""

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload


class OwnClientChatAnthropic(ChatAnthropic):
    """`ChatAnthropic` whose async client is its own, not the process-wide cached one."""

    @cached_property
    def _async_client(self) -> anthropic.AsyncClient:
        params = dict(self._client_params)
        http_client = anthropic.DefaultAsyncHttpxClient(timeout=params.get("timeout"))
        return anthropic.AsyncClient(**params, http_client=http_client)
