"""Local fakes of OpenAI's chat completions and Anthropic's messages APIs that enforce their
published request rules, for contract tests (no network, no key). Not a mock of our client: a
server on 127.0.0.1 that the real LangChain clients talk to through the base-URL settings.

What they enforce, with the APIs' error shapes:

- OpenAI reasoning models (gpt-5 family, o-series): ``temperature`` other than 1, ``top_p``,
  ``max_tokens`` (``max_completion_tokens`` instead) and ``logprobs`` are rejected with 400;
  hidden reasoning tokens (by ``reasoning_effort``) are spent inside ``max_completion_tokens``:
  a budget they fill leaves an empty reply with ``finish_reason: length``.
- Anthropic: ``max_tokens`` is required; claude-opus-4-7 rejects ``temperature``; a model rejects
  ``temperature`` and ``top_p`` together.
- An unknown model is a 404 in each API's shape; a rate-limit window answers 429 with
  ``retry-after`` (and OpenAI's ``x-ratelimit-reset-requests``) until it closes.
- Prompt caching: OpenAI caches a repeated prefix of at least 1024 tokens automatically (in
  128-token steps, ``prompt_tokens_details.cached_tokens``); Anthropic caches the prefix up to a
  ``cache_control`` block when it reaches the model's minimum (``cache_creation_input_tokens``
  the first time, ``cache_read_input_tokens`` after).
- A prompt containing `FakeProviders.flagged` is refused as OpenAI refuses a flagged prompt
  (400 ``invalid_prompt``): a permanent error, whatever is retried.
- OpenAI-compatible servers (`COMPATIBLE_SERVERS`, at ``<base_url>/<server>/v1``), emulated from
  their published behaviour because neither can run here: vLLM's OpenAI server reads the cap
  from ``max_completion_tokens`` or ``max_tokens``; Ollama's ``/v1`` endpoint reads only
  ``max_tokens`` (its list of supported fields has no ``max_completion_tokens``: that one is
  ignored and the reply runs uncapped). Both stop at the cap with ``finish_reason: length`` and report ``usage``
  (``prompt_tokens``, ``completion_tokens``, ``total_tokens``; no cached tokens) and
  ``logprobs``, and answer 404 in their own error shapes for a model they do not serve.

Tokens are counted by the fakes' own rule (4 characters a token), and every call is billed from
their own price list (`FAKE_PRICES`, typed from the providers' price pages, independent of the
model table under test). `FakeProviders.billed` is what the provider would charge.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from ...support import serve_app

# USD per 1M tokens: OpenAI (input, cached input, output); Anthropic (input, cache write, cache read, output)
FAKE_PRICES: dict[str, tuple[float, ...]] = {
    "gpt-5": (1.25, 0.125, 10.0), "gpt-5-mini": (0.25, 0.025, 2.0), "gpt-5-nano": (0.05, 0.005, 0.4),
    "o1": (15.0, 7.5, 60.0), "o3": (2.0, 0.5, 8.0), "o4-mini": (1.1, 0.275, 4.4), "gpt-4o": (2.5, 1.25, 10.0),
    "gpt-4o-mini": (0.15, 0.075, 0.6), "gpt-4.1-mini": (0.4, 0.1, 1.6),
    "claude-opus-4-7": (5.0, 6.25, 0.5, 25.0), "claude-sonnet-4-5": (3.0, 3.75, 0.3, 15.0),
    "claude-haiku-4-5": (1.0, 1.25, 0.1, 5.0),
    "gpt-5.4": (2.5, 0.25, 15.0),  # served by the fake, absent from itemsmith's table: defaults and a notice
}
OPENAI_REASONING = ("gpt-5", "o1", "o3", "o4")
REASONING_TOKENS = {"none": 0, "minimal": 0, "low": 300, "medium": 1200, "high": 4000}
ANTHROPIC_CACHE_MIN = {"claude-opus-4-7": 4096, "claude-sonnet-4-5": 1024, "claude-haiku-4-5": 4096}
ANTHROPIC_NO_TEMPERATURE = ("claude-opus-4-7",)

Responder = Callable[[str, str], str]  # (model, prompt text) -> the visible reply


def tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


def default_responder(model: str, prompt: str) -> str:
    """Judges score 8, students answer A, anything else gets a short sentence."""
    if "Criterion: " in prompt:
        return "The questions are specific and answerable from the series.\nScore: 8"
    if "Answer: X" in prompt:
        return "Reading the series, the answer is clear.\nAnswer: A"
    return "A short reply."


@dataclass
class Call:
    """One request as the fake saw it and billed it."""

    api: str
    model: str
    status: int
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    finish: str | None = None
    cost_usd: float = 0.0
    body: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeProviders:
    """Both fakes' state: the calls, the rate-limit window, the caches, the responder."""

    responder: Responder = default_responder
    calls: list[Call] = field(default_factory=list)
    flagged: str | None = None
    rate_limited_until: float = 0.0
    openai_prefixes: dict[str, list[str]] = field(default_factory=dict)
    anthropic_cached: set[tuple[str, str]] = field(default_factory=set)
    base_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def rate_limit_for(self, seconds: float) -> None:
        self.rate_limited_until = time.monotonic() + seconds

    @property
    def billed(self) -> float:
        return sum(c.cost_usd for c in self.calls)

    def sent(self, status: int | None = None) -> list[Call]:
        return [c for c in self.calls if status is None or c.status == status]

    def _record(self, call: Call) -> None:
        with self.lock:
            self.calls.append(call)

    def _limited(self) -> float | None:
        left = self.rate_limited_until - time.monotonic()
        return left if left > 0 else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def _openai_error(status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None,
                  code: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param, "code": code}},
                        status_code=status, headers=headers)


def _anthropic_error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"type": "error", "error": {"type": kind, "message": message}}, status_code=status,
                        headers=headers)


def _openai_rules(body: dict[str, Any]) -> JSONResponse | None:
    model = body.get("model", "")
    if model not in FAKE_PRICES or model.startswith("claude"):
        return _openai_error(404, f"The model `{model}` does not exist or you do not have access to it.",
                             code="model_not_found")
    if model.startswith(OPENAI_REASONING):
        if body.get("temperature") not in (None, 1):
            return _openai_error(400, f"Unsupported value: 'temperature' does not support {body['temperature']} "
                                      "with this model. Only the default (1) value is supported.",
                                 param="temperature", code="unsupported_value")
        if "top_p" in body:
            return _openai_error(400, "Unsupported parameter: 'top_p' is not supported with this model.",
                                 param="top_p", code="unsupported_parameter")
        if "max_tokens" in body:
            return _openai_error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                                      "'max_completion_tokens' instead.", param="max_tokens",
                                 code="unsupported_parameter")
        if body.get("logprobs"):
            return _openai_error(400, "logprobs are not supported with reasoning models.", param="logprobs",
                                 code="unsupported_parameter")
    return None


def _openai_cached(state: FakeProviders, model: str, prompt: str) -> int:
    """Automatic caching: the longest prefix shared with an earlier prompt, from 1024 tokens, in steps of 128."""
    best = 0
    for earlier in state.openai_prefixes.get(model, []):
        shared = 0
        for a, b in zip(earlier, prompt, strict=False):
            if a != b:
                break
            shared += 1
        best = max(best, shared // 4)
    state.openai_prefixes.setdefault(model, []).append(prompt)
    return best // 128 * 128 if best >= 1024 else 0


def _logprob_tokens(reply: str) -> list[dict[str, Any]]:
    """The reply as tokens with top alternatives: a score digit gets its neighbours as alternatives,
    a one-letter answer the next letter."""
    if len(reply) == 1 and reply.isalpha():
        other = "B" if reply == "A" else "A"
        return [{"token": reply, "logprob": math.log(0.8),
                 "top_logprobs": [{"token": reply, "logprob": math.log(0.8)},
                                  {"token": f" {other}", "logprob": math.log(0.15)}]}]
    head, sep, digits = reply.rpartition("Score: ")
    if not sep or not digits.strip().isdigit():
        return [{"token": reply, "logprob": -0.1, "top_logprobs": []}]
    score = int(digits.strip())
    alternatives = [{"token": str(score), "logprob": math.log(0.7)},
                    {"token": str(max(1, score - 1)), "logprob": math.log(0.2)},
                    {"token": str(min(10, score + 1)), "logprob": math.log(0.1)}]
    return [{"token": head + sep, "logprob": -0.05, "top_logprobs": []},
            {"token": digits, "logprob": math.log(0.7), "top_logprobs": alternatives}]


def create_app(state: FakeProviders) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models/{model}")
    async def retrieve_model(model: str, request: Request) -> Response:
        """Both APIs' model lookup (the same path: Anthropic's client sends ``anthropic-version``)."""
        if "anthropic-version" in request.headers:
            if model.startswith("claude") and model in FAKE_PRICES:
                return JSONResponse({"id": model, "type": "model", "display_name": model,
                                     "created_at": "2025-01-01T00:00:00Z"})
            return _anthropic_error(404, "not_found_error", f"model: {model}")
        if model in FAKE_PRICES and not model.startswith("claude"):
            return JSONResponse({"id": model, "object": "model", "created": 0, "owned_by": "fake"})
        return _openai_error(404, f"The model `{model}` does not exist or you do not have access to it.",
                             code="model_not_found")

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        body = await request.json()
        model = body.get("model", "")
        if (left := state._limited()) is not None:
            state._record(Call("openai", model, 429, body=body))
            return _openai_error(429, f"Rate limit reached for {model}: limit 1 request per window. Please try "
                                      f"again in {left:.3f}s.", kind="requests", code="rate_limit_exceeded",
                                 headers={"retry-after": str(math.ceil(left)),
                                          "x-ratelimit-reset-requests": f"{left:.3f}s"})
        if (error := _openai_rules(body)) is not None:
            state._record(Call("openai", model, error.status_code, body=body))
            return error
        prompt = "".join(_text(m.get("content")) for m in body.get("messages", []))
        if state.flagged is not None and state.flagged in prompt:
            state._record(Call("openai", model, 400, body=body))
            return _openai_error(400, "Invalid prompt: your prompt was flagged as potentially violating our usage "
                                      "policy. Please try again with a different prompt.", code="invalid_prompt")
        reply = state.responder(model, prompt)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        if body.get("logprobs") and cap is not None and cap <= 2 and (letter := re.search(r"Answer: ([A-F])", reply)):
            reply = letter.group(1)  # a one-token answer: the letter
        reasoning = REASONING_TOKENS[body.get("reasoning_effort") or "medium"] if model.startswith(
            OPENAI_REASONING) else 0
        budget = body.get("max_completion_tokens") or body.get("max_tokens") or 1 << 30
        visible_budget = max(0, budget - reasoning)
        finish = "stop"
        if tokens(reply) > visible_budget:
            reply, finish = reply[:visible_budget * 4], "length"
        reasoning = min(reasoning, budget)
        prompt_tokens = tokens(prompt)
        cached = _openai_cached(state, model, prompt)
        out = tokens(reply) + reasoning
        price = FAKE_PRICES[model]
        cost = ((prompt_tokens - cached) * price[0] + cached * price[1] + out * price[2]) / 1e6
        state._record(Call("openai", model, 200, prompt_tokens, cached, 0, out, reasoning, finish, cost, body))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": out, "total_tokens": prompt_tokens + out,
                 "prompt_tokens_details": {"cached_tokens": cached},
                 "completion_tokens_details": {"reasoning_tokens": reasoning}}
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": reply},
                                  "finish_reason": finish,
                                  "logprobs": {"content": _logprob_tokens(reply)} if body.get("logprobs") else None}
        created = int(time.time())
        if body.get("stream"):
            return StreamingResponse(_openai_stream(model, reply, finish, usage, created),
                                     media_type="text/event-stream")
        return JSONResponse({"id": f"chatcmpl-{len(state.calls)}", "object": "chat.completion", "created": created,
                             "model": model, "choices": [choice], "usage": usage})

    @app.post("/v1/messages")
    async def messages(request: Request) -> Response:
        body = await request.json()
        model = body.get("model", "")
        if (left := state._limited()) is not None:
            state._record(Call("anthropic", model, 429, body=body))
            return _anthropic_error(429, "rate_limit_error", "This request would exceed the rate limit for your "
                                    "organization. Please try again later.",
                                    headers={"retry-after": str(math.ceil(left))})
        if model not in FAKE_PRICES or not model.startswith("claude"):
            state._record(Call("anthropic", model, 404, body=body))
            return _anthropic_error(404, "not_found_error", f"model: {model}")
        problem = None
        if "max_tokens" not in body:
            problem = "max_tokens: Field required"
        elif "temperature" in body and model.startswith(ANTHROPIC_NO_TEMPERATURE):
            problem = "`temperature` is deprecated for this model."
        elif "temperature" in body and "top_p" in body:
            problem = "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
        if problem is not None:
            state._record(Call("anthropic", model, 400, body=body))
            return _anthropic_error(400, "invalid_request_error", problem)
        system = _text(body.get("system"))
        blocks: list[tuple[str, bool]] = [(system, False)] if system else []
        for message in body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                blocks.append((content, False))
            else:
                blocks.extend((b.get("text", ""), "cache_control" in b) for b in content if isinstance(b, dict))
        prompt = "".join(text for text, _ in blocks)
        marked = max((i for i, (_, mark) in enumerate(blocks) if mark), default=None)
        read = written = 0
        if marked is not None:
            prefix = "".join(text for text, _ in blocks[:marked + 1])
            if tokens(prefix) >= ANTHROPIC_CACHE_MIN[model]:
                if (model, prefix) in state.anthropic_cached:
                    read = tokens(prefix)
                else:
                    state.anthropic_cached.add((model, prefix))
                    written = tokens(prefix)
        total = tokens(prompt)
        fresh = total - read - written
        reply = state.responder(model, prompt)
        stop = "end_turn"
        if tokens(reply) > body["max_tokens"]:
            reply, stop = reply[:body["max_tokens"] * 4], "max_tokens"
        out = tokens(reply)
        price = FAKE_PRICES[model]
        cost = (fresh * price[0] + written * price[1] + read * price[2] + out * price[3]) / 1e6
        state._record(Call("anthropic", model, 200, total, read, written, out, 0, stop, cost, body))
        usage = {"input_tokens": fresh, "output_tokens": out, "cache_creation_input_tokens": written,
                 "cache_read_input_tokens": read}
        message_id = f"msg_{len(state.calls)}"
        if body.get("stream"):
            return StreamingResponse(_anthropic_stream(message_id, model, reply, stop, usage),
                                     media_type="text/event-stream")
        return JSONResponse({"id": message_id, "type": "message", "role": "assistant", "model": model,
                             "content": [{"type": "text", "text": reply}], "stop_reason": stop,
                             "stop_sequence": None, "usage": usage})

    @app.get("/{server}/v1/models")
    async def compatible_models(server: str) -> Response:
        served = COMPATIBLE_SERVERS[server].model
        return JSONResponse({"object": "list", "data": [{"id": served, "object": "model", "owned_by": server}]})

    @app.post("/{server}/v1/chat/completions")
    async def compatible_chat(server: str, request: Request) -> Response:
        emulated, body = COMPATIBLE_SERVERS[server], await request.json()
        model = body.get("model", "")
        if model != emulated.model:
            state._record(Call(server, model, 404, body=body))
            return emulated.not_found(model)
        prompt = "".join(_text(m.get("content")) for m in body.get("messages", []))
        cap = next((body[name] for name in emulated.cap_fields if body.get(name) is not None), None)
        reply, finish = state.responder(model, prompt), "stop"
        if body.get("logprobs") and cap is not None and cap <= 2 and (letter := re.search(r"Answer: ([A-F])", reply)):
            reply = letter.group(1)
        if cap is not None and tokens(reply) > cap:
            reply, finish = reply[:cap * 4], "length"
        prompt_tokens, out = tokens(prompt), tokens(reply)
        state._record(Call(server, model, 200, prompt_tokens, 0, 0, out, 0, finish, 0.0, body))
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": out, "total_tokens": prompt_tokens + out}
        created = int(time.time())
        if body.get("stream"):
            return StreamingResponse(_openai_stream(model, reply, finish, usage, created),
                                     media_type="text/event-stream")
        choice = {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": finish,
                  "logprobs": {"content": _logprob_tokens(reply)} if body.get("logprobs") else None}
        return JSONResponse({"id": f"chatcmpl-{len(state.calls)}", "object": "chat.completion", "created": created,
                             "model": model, "choices": [choice], "usage": usage})

    return app


@dataclass(frozen=True)
class CompatibleServer:
    """How one OpenAI-compatible server reads a chat request, after its documentation."""

    model: str  # the one model it serves
    cap_fields: tuple[str, ...]  # the request fields read as the reply cap, the first one present wins
    not_found: Callable[[str], JSONResponse]


COMPATIBLE_SERVERS: dict[str, CompatibleServer] = {
    "vllm": CompatibleServer(
        model="Qwen/Qwen2.5-7B-Instruct", cap_fields=("max_completion_tokens", "max_tokens"),
        not_found=lambda model: JSONResponse({"object": "error", "message": f"The model `{model}` does not exist.",
                                              "type": "NotFoundError", "param": None, "code": 404}, status_code=404)),
    "ollama": CompatibleServer(
        model="qwen2.5:7b", cap_fields=("max_tokens",),
        not_found=lambda model: _openai_error(404, f'model "{model}" not found, try pulling it first',
                                              kind="api_error")),
}


async def _openai_stream(model: str, reply: str, finish: str, usage: dict[str, Any], created: int) -> Any:
    def chunk(delta: dict[str, Any], finish_reason: str | None, extra: dict[str, Any] | None = None) -> str:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish_reason}] if extra is None else []
        payload = {"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": choices, **(extra or {})}
        return f"data: {json.dumps(payload)}\n\n"

    yield chunk({"role": "assistant", "content": reply}, None)
    yield chunk({}, finish)
    yield chunk({}, None, {"usage": usage})
    yield "data: [DONE]\n\n"


async def _anthropic_stream(message_id: str, model: str, reply: str, stop: str, usage: dict[str, Any]) -> Any:
    def event(kind: str, data: dict[str, Any]) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    start_usage = {**usage, "output_tokens": 1}
    yield event("message_start", {"message": {"id": message_id, "type": "message", "role": "assistant",
                                              "model": model, "content": [], "stop_reason": None,
                                              "stop_sequence": None, "usage": start_usage}})
    yield event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    yield event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": reply}})
    yield event("content_block_stop", {"index": 0})
    yield event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": usage["output_tokens"]}})
    yield event("message_stop", {})


@contextmanager
def serve(state: FakeProviders | None = None) -> Iterator[FakeProviders]:
    """Both fakes on one 127.0.0.1 port (OpenAI's base URL is ``<base_url>/v1``, Anthropic's
    ``<base_url>``), for the duration of the block."""
    state = state or FakeProviders()
    with serve_app(create_app(state), lifespan="off") as state.base_url:
        yield state


def fake_env(state: FakeProviders) -> dict[str, str]:
    """The settings that point itemsmith's openai: and anthropic: models at the fakes."""
    return {"ITEMSMITH_OPENAI_BASE_URL": f"{state.base_url}/v1", "ITEMSMITH_ANTHROPIC_BASE_URL": state.base_url,
            "ITEMSMITH_OPENAI_API_KEY": "sk-fake-0000000000", "ITEMSMITH_ANTHROPIC_API_KEY": "sk-ant-fake-000000"}


__all__ = ["COMPATIBLE_SERVERS", "FAKE_PRICES", "Call", "CompatibleServer", "FakeProviders", "create_app",
           "default_responder", "fake_env", "serve"]
