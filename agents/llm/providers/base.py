"""What every provider is: a `Provider` builds a spec's chat model as a `ModelHandle` with its
call policy (timeout and retries, `AgentSettings.call_policy`), its concurrency limit and its
capabilities (the model table, `agents.llm.catalog`, unless the provider knows better), and says
before anything is built whether a spec names something that exists (`check`), what a request
may name (`spec_shape`) and what this machine lacks for it (`missing_credentials`).

A provider's module (`openai`, `anthropic`, `openai_compatible`, `local`, `scripted`) subclasses
it; `agents.llm.providers` registers one instance of each by its `name`. Clients are built with
their own retries off: `agents.llm.inference.complete` is the only (bounded) retry layer.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities, entry_for
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings, CallPolicy

if TYPE_CHECKING:  # `agents.llm.inference` (LangChain) is imported when a model is built, not to check a spec
    from itemsmith.agents.llm.inference import ModelHandle

__all__ = ["MODEL_NAME", "ModelOptions", "Provider", "SpecPolicy", "max_tokens", "temperature"]

MODEL_NAME = r"[!-?A-~]+"  # a model's (or a script's) name: printable ASCII but "@" (it separates an endpoint, a rank)


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


class ModelOptions(BaseModel):
    """Per-role sampling options. `max_tokens` is the reply's budget; a reasoning model gets its
    role's reasoning budget on top (`AgentSettings.reasoning_budget`)."""

    temperature: float | None = None
    max_tokens: int | None = None
    role: str = ""


def temperature(options: ModelOptions, settings: AgentSettings) -> float:
    return settings.temperature if options.temperature is None else options.temperature


def max_tokens(options: ModelOptions, settings: AgentSettings) -> int:
    return settings.max_output_tokens if options.max_tokens is None else options.max_tokens


class Provider:
    """One provider of chat models. Subclasses set `name` and write `chat_model`; the rest has
    defaults: every name a model, the table's capabilities, the provider's call policy, no
    concurrency limit, nothing to check and no credentials."""

    name: ClassVar[str]
    max_concurrency: ClassVar[int | None] = None  # calls in flight at once (None: no limit)

    def check(self, spec: ModelSpec, policy: SpecPolicy, settings: AgentSettings) -> None:
        """Raise `ProviderConfigError` when `spec` names what does not exist or `policy` forbids."""

    def spec_shape(self, settings: AgentSettings) -> str | None:
        """A regular expression of what may follow ``provider:`` in a request's spec (None: nothing)."""
        return MODEL_NAME

    def missing_credentials(self, spec: ModelSpec, settings: AgentSettings) -> str | None:
        """Why `spec`'s model lacks its credentials here; None when nothing is missing. Builds
        nothing and calls nobody."""
        return None

    def call_policy(self, spec: ModelSpec, settings: AgentSettings) -> CallPolicy:
        """How the model's calls are timed and retried."""
        return settings.call_policy(self.name)

    def concurrency(self, spec: ModelSpec, settings: AgentSettings) -> int | None:
        return self.max_concurrency

    def capabilities(self, spec: ModelSpec, settings: AgentSettings) -> Capabilities:
        return entry_for(self.name, spec.model).capabilities

    def model_name(self, spec: ModelSpec, settings: AgentSettings) -> str:
        """The name the model is metered and priced under."""
        return spec.model

    def chat_model(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings, calls: CallPolicy,
                   capabilities: Capabilities) -> Any:
        """The LangChain chat model, its client's own retries off."""
        raise NotImplementedError

    def build(self, spec: ModelSpec, options: ModelOptions, settings: AgentSettings) -> ModelHandle:
        """The model of `spec` with its call policy, concurrency limit and capabilities."""
        from itemsmith.agents.llm.inference import ModelHandle

        if (missing := self.missing_credentials(spec, settings)) is not None:
            raise ProviderConfigError(missing)
        calls = self.call_policy(spec, settings)
        capabilities = self.capabilities(spec, settings)
        model = self.chat_model(spec, options, settings, calls, capabilities)
        assert calls.timeout_s is not None and calls.retry_timeouts is not None  # AgentSettings.call_policy sets them
        return ModelHandle(model, self.name, self.model_name(spec, settings), calls.timeout_s,
                           max_concurrency=self.concurrency(spec, settings), max_retries=calls.max_retries,
                           retry_timeouts=calls.retry_timeouts, capabilities=capabilities)
