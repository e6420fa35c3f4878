"""The chat model of OpenAI-compatible servers (llama.cpp's server, vLLM, Ollama).

LangChain's `ChatOpenAI` sends the reply cap as ``max_completion_tokens`` (OpenAI's current
name). llama.cpp's server ignores that field (asked for 8 tokens, it wrote 17), so a capped call
ran uncapped and held a single-slot server until the timeout; these servers read ``max_tokens``.
"""

from __future__ import annotations

from typing import Any

from langchain_openai import ChatOpenAI


class CompatibleChatOpenAI(ChatOpenAI):
    """`ChatOpenAI` that sends the cap as ``max_tokens``."""

    def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        if "max_completion_tokens" in payload:
            payload["max_tokens"] = payload.pop("max_completion_tokens")
        return payload
