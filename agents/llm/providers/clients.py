"""LangChain chat models as itemsmith builds them for hosted and self-hosted APIs.

- `CompatibleChatOpenAI`, for OpenAI-compatible servers (llama.cpp's server, vLLM, Ollama):
  LangChain's `ChatOpenAI` sends the reply cap as ``max_completion_tokens`` (OpenAI's current
  name); llama.cpp's server ignores that field (asked for 8 tokens, it wrote 17), so a capped call
  ran uncapped and held a single-slot server until the timeout. These servers read ``max_tokens``.
- Every model gets an HTTP client of its own that opens a fresh connection pool whenever it is
  used from another event loop (`own_async_client`, `OwnClientChatAnthropic`): LangChain shares
  one cached async client per base URL across the process, whose connections belong to the event
  loop that opened them, so the next loop (an adaptive pick, the next job in a worker, the next
  run in a process) failed with "Event loop is closed" (after the request had been sent and
  billed).
"""

from __future__ import annotations

import asyncio
from functools import cache, cached_property
from typing import Any

import anthropic
import openai
from langchain_anthropic import ChatAnthropic
from langchain_openai import ChatOpenAI


@cache
def _loop_bound(base: type) -> type:
    """`base` (an SDK's async httpx client) with a connection pool per event loop."""

    class LoopBoundAsyncClient(base):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._itemsmith_kwargs = kwargs
            self._itemsmith_loop: asyncio.AbstractEventLoop | None = None

        async def send(self, request: Any, **kwargs: Any) -> Any:
            loop = asyncio.get_running_loop()
            if self._itemsmith_loop is not None and self._itemsmith_loop is not loop:
                self._transport = base(**self._itemsmith_kwargs)._transport  # the old pool's loop is gone
            self._itemsmith_loop = loop
            return await super().send(request, **kwargs)

    return LoopBoundAsyncClient


def own_async_client(timeout_s: float | None) -> Any:
    """An async HTTP client of one OpenAI model (the SDK's defaults: limits, redirects), with a
    connection pool per event loop."""
    return _loop_bound(openai.DefaultAsyncHttpxClient)(timeout=timeout_s)


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` that sends the cap as ``max_tokens``."""

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload


class OwnClientChatAnthropic(ChatAnthropic):
    """`ChatAnthropic` whose async client is its own (a pool per event loop), not the process-wide one."""

    @cached_property
    def _async_client(self) -> anthropic.AsyncClient:
        params = dict(self._client_params)
        http_client = _loop_bound(anthropic.DefaultAsyncHttpxClient)(timeout=params.get("timeout"))
        return anthropic.AsyncClient(**params, http_client=http_client)
