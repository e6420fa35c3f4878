"""A chat model that replays recorded replies: for tests and benchmarks, never for real runs.

A script is a JSON or YAML file (or the same structure in memory)::

    latency_s: 0.0            # simulated latency of every call (default 0)
    exhausted: repeat_last    # when a reply list runs out: repeat_last | error
    replies:                  # consumed in order by calls that match no rule
      - "```python\\ndef question(num_samples): ...```"
      - {error: 429}          # raise an HTTP-429-like error (transient: retried)
      - {error: 500}          # any status code; 400 is permanent
      - {error: timeout}      # raise TimeoutError at once
      - {content: "...", latency_s: 5, usage: {input_tokens: 10, output_tokens: 3}}
      - {content: "...", finish_reason: length}   # cut at the output limit
    rules:                    # replies chosen by a regex on the last message (own cursor each)
      - match: "Brief: .*peak"
        replies: [...]

Streamed (`astream`), a reply comes in chunks of `stream_chars` characters (default 4, about a
token each), the usage on the last one.

Rules make concurrent runs deterministic: each slot's prompt names its brief, so each slot
gets its own sequence whatever order the calls arrive in. Usage is the reply's `usage`, else
about one token per 4 characters.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities
from itemsmith.agents.llm.providers.base import MODEL_NAME, ModelOptions, Provider, SpecPolicy
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy


class ScriptedHTTPError(RuntimeError):
    """A simulated provider error with an HTTP status code (429 and 5xx are transient)."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"scripted provider error: HTTP {status_code}")
        self.status_code = status_code


class ScriptExhausted(RuntimeError):
    """A reply list ran out and the script says `exhausted: error`."""


class ScriptedReply(BaseModel):
    """One recorded reply, error or delay."""

    model_config = ConfigDict(extra="forbid")

    content: str = ""
    error: int | Literal["timeout", "connection"] | None = None
    latency_s: float | None = Field(None, ge=0)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None  # e.g. "length": the reply stopped at the output limit

    @classmethod
    def coerce(cls, raw: Any) -> ScriptedReply:
        return cls(content=raw) if isinstance(raw, str) else cls.model_validate(raw)


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: str
    replies: list[ScriptedReply]

    @field_validator("replies", mode="before")
    @classmethod
    def _coerce(cls, value: Any) -> Any:
        return [ScriptedReply.coerce(v) for v in value]


class Script(BaseModel):
    """A whole script: default replies, regex rules, latency, what to do when one runs out."""

    model_config = ConfigDict(extra="forbid")

    replies: list[ScriptedReply] = Field(default_factory=list)
    rules: list[ScriptRule] = Field(default_factory=list)
    latency_s: float = Field(0.0, ge=0)
    exhausted: Literal["repeat_last", "error"] = "repeat_last"
    stream_chars: int = Field(4, ge=1, description="characters per streamed chunk")

    @field_validator("replies", mode="before")
    @classmethod
    def _coerce(cls, value: Any) -> Any:
        return [ScriptedReply.coerce(v) for v in value]

    @classmethod
    def load(cls, source: str | Path | list[Any] | dict[str, Any]) -> Script:
        """From a file (.json, .yaml/.yml), a list of replies, or a dict."""
        if isinstance(source, list):
            return cls(replies=source)
        if isinstance(source, dict):
            return cls.model_validate(source)
        path = Path(source)
        text = path.read_text()
        if path.suffix in (".yaml", ".yml"):
            import yaml  # a dependency of langchain-core

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
        return cls.load(data)


class ScriptedChatModel(BaseChatModel):
    """Replays a `Script`. `calls` counts every call; `prompts` keeps the last message of each,
    `temperatures` the temperature each call asked for (None: the model's own)."""

    script: Script
    model_name: str = "scripted"
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _cursors: dict[int, int] = PrivateAttr(default_factory=dict)
    _rules: list[tuple[re.Pattern[str], ScriptRule]] = PrivateAttr(default_factory=list)
    _calls: int = PrivateAttr(default=0)
    _prompts: list[str] = PrivateAttr(default_factory=list)
    _temperatures: list[float | None] = PrivateAttr(default_factory=list)

    @property
    def calls(self) -> int:
        """How many calls were made (including those that raised)."""
        return self._calls

    @property
    def prompts(self) -> list[str]:
        """The last message of every call, in order."""
        return list(self._prompts)

    @property
    def temperatures(self) -> list[float | None]:
        """The temperature every call asked for, in order."""
        return list(self._temperatures)

    def model_post_init(self, context: Any) -> None:
        self._rules = [(re.compile(rule.match, re.S), rule) for rule in self.script.rules]

    @classmethod
    def from_source(cls, source: str | Path | list[Any] | dict[str, Any], **kwargs: Any) -> ScriptedChatModel:
        return cls(script=Script.load(source), **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def _next(self, messages: list[BaseMessage], temperature: float | None = None) -> ScriptedReply:
        last = str(messages[-1].content) if messages else ""
        whole = "\n".join(str(m.content) for m in messages)
        with self._lock:
            self._calls += 1
            self._prompts.append(last)
            self._temperatures.append(temperature)
            key, replies = -1, self.script.replies
            for index, (pattern, rule) in enumerate(self._rules):
                if pattern.search(whole):
                    key, replies = index, rule.replies
                    break
            if not replies:
                raise ScriptExhausted("the script has no reply for this call")
            position = self._cursors.get(key, 0)
            self._cursors[key] = position + 1
        if position >= len(replies):
            if self.script.exhausted == "error":
                raise ScriptExhausted(f"the script ran out of replies after {len(replies)}")
            position = len(replies) - 1
        return replies[position]

    def _result(self, reply: ScriptedReply, messages: list[BaseMessage]) -> ChatResult:
        if reply.error == "timeout":
            raise TimeoutError("scripted timeout")
        if reply.error == "connection":
            raise ConnectionError("scripted connection error")
        if isinstance(reply.error, int):
            raise ScriptedHTTPError(reply.error)
        prompt_chars = sum(len(str(m.content)) for m in messages)
        usage = reply.usage or {"input_tokens": max(1, prompt_chars // 4),
                                "output_tokens": max(1, len(reply.content) // 4)}
        inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        message = AIMessage(content=reply.content, usage_metadata={"input_tokens": inp, "output_tokens": out,
                                                                    "total_tokens": inp + out},
                            response_metadata={"model_name": self.model_name}
                            | ({"finish_reason": reply.finish_reason} if reply.finish_reason else {}))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _latency(self, reply: ScriptedReply) -> float:
        return self.script.latency_s if reply.latency_s is None else reply.latency_s

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        reply = self._next(messages, kwargs.get("temperature"))
        if self._latency(reply):
            time.sleep(self._latency(reply))
        return self._result(reply, messages)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        reply = self._next(messages, kwargs.get("temperature"))
        if self._latency(reply):
            await asyncio.sleep(self._latency(reply))
        return self._result(reply, messages)

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._next(messages, kwargs.get("temperature"))
        if self._latency(reply):
            await asyncio.sleep(self._latency(reply))
        message = self._result(reply, messages).generations[0].message
        assert isinstance(message, AIMessage)
        step = self.script.stream_chars
        pieces = [message.text[i:i + step] for i in range(0, len(message.text), step)] or [""]
        for number, piece in enumerate(pieces, start=1):
            last = number == len(pieces)
            yield ChatGenerationChunk(message=AIMessageChunk(
                content=piece, usage_metadata=message.usage_metadata if last else None,
                response_metadata=message.response_metadata if last else {}))


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


def _scripts_in(folder: Path | None) -> str | None:
    """The script files a service's request may name: those in its scripts folder, by relative path."""
    if folder is None:
        return None
    root = folder.expanduser().resolve()
    names = sorted(str(path.relative_to(root)) for path in root.rglob("*")
                   if path.is_file() and path.resolve().is_relative_to(root)
                   and re.fullmatch(MODEL_NAME, str(path.relative_to(root))))
    return "(?:" + "|".join(re.escape(name) for name in names) + ")" if names else None


class ScriptedProvider(Provider):
    """``scripted:FILE``: a `ScriptedChatModel` replaying a script file (tests only;
    ``ITEMSMITH_SCRIPTED_DIR``), metered under the file's name."""

    name = "scripted"

    def check(self, spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings) -> None:
        script_path(spec.model, settings, anywhere=policy.scripts_anywhere)

    def spec_shape(self, settings: AgentSettings) -> str | None:
        return _scripts_in(settings.scripted_dir)

    def _path(self, spec: ModelSpec, settings: AgentSettings) -> Path:
        return script_path(spec.model, settings, anywhere=settings.scripted_dir is None)

    def model_name(self, spec: ModelSpec, settings: AgentSettings) -> str:
        return self._path(spec, settings).name

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        path = self._path(spec, settings)
        return ScriptedChatModel.from_source(path, model_name=path.stem)
