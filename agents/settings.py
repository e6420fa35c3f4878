"""The agents layer's settings (``ITEMSMITH_*``; the naming rule is `itemsmith.layer_settings`'s).

API keys are `SecretStr`: they never appear in a repr, a log line or a report. Each key is
also read from the provider's usual variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``).

Named model endpoints (``ITEMSMITH_ENDPOINTS``, once ``ITEMSMITH_API_ENDPOINTS``) are the
operator's list of OpenAI-compatible servers: a spec names one (``openai_compatible:MODEL@NAME``)
and only a configured endpoint ever receives a credential, read from the server environment
variable the endpoint names.
Timeouts and retries are set per provider (``ITEMSMITH_PROVIDER_CALLS``) and per endpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    field_validator,
)
from pydantic_settings import SettingsConfigDict

from itemsmith.agents.errors import SettingsError
from itemsmith.agents.llm.spec import ENDPOINT_NAME_PATTERN, ModelSpec, ModelSpecField, StudentSpec
from itemsmith.layer_settings import InvalidSettings, LayerSettings

DEFAULT_LOCAL_GENERATOR = ModelSpec(provider="local", model="qwen2.5-coder-1.5b")
DEFAULT_OPENAI_GENERATOR = ModelSpec(provider="openai", model="gpt-4o")
DEFAULT_ANTHROPIC_GENERATOR = ModelSpec(provider="anthropic", model="claude-sonnet-4-5")
# the offline verification pipeline: extras `local` (1.5B), `local-small` (0.5B), `local-tiny` (135M)
DEFAULT_LOCAL_JUDGES = (DEFAULT_LOCAL_GENERATOR,)
DEFAULT_LOCAL_STUDENTS = tuple(StudentSpec(spec=ModelSpec(provider="local", model=name), rank=rank) for name, rank in
                               (("smollm2-135m", 1), ("qwen2.5-coder-0.5b", 2), ("qwen2.5-coder-1.5b", 3)))

# hidden reasoning tokens per role on top of the reply budget: a normal reply still fits after "low" reasoning
DEFAULT_REASONING_BUDGETS = {"planner": 8000, "generator": 16000, "judge": 4000, "student": 4000, "solver": 8000}
REASONING_ROLES = ("planner", "generator", "judge", "student", "solver")  # the solver: the re-derivation's
ReasoningTokens = Annotated[int, Field(ge=0, le=128000)]

EndpointName = Annotated[str, StringConstraints(pattern=ENDPOINT_NAME_PATTERN)]


class CallPolicy(BaseModel):
    """How calls to one provider or endpoint are timed and retried; an unset field falls back
    (endpoint -> ``ITEMSMITH_PROVIDER_CALLS`` -> built-in default of the provider -> global setting)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float | None = Field(None, gt=0, le=7200, description="per call")
    max_retries: int | None = Field(None, ge=0, le=10, description="retries of a transient error")
    retry_timeouts: bool | None = Field(
        None, description="whether a timed-out call is sent again (false for a slow single-slot server: the "
                          "abandoned call keeps it busy, and a retry would queue the same long prompt behind it)")


# A self-hosted server is often slow rather than down: one long timeout, and a timed-out call is not re-sent.
BUILTIN_CALL_POLICIES: dict[str, CallPolicy] = {
    "openai_compatible": CallPolicy(timeout_s=600.0, max_retries=1, retry_timeouts=False),
}


class ModelEndpoint(CallPolicy):
    """One OpenAI-compatible server the operator allows: where it is and how to authenticate."""

    base_url: str = Field(description="http(s) base URL, e.g. http://vllm:8000/v1")
    api_key_env: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")] | None = Field(
        None, description="the server environment variable holding this endpoint's key (none: no key)")
    max_concurrency: int | None = Field(None, ge=1, le=1024, description="calls in flight at once (1: single slot)")
    logprobs: bool = Field(False, description="the server returns token log-probabilities (llama.cpp, vLLM): judges "
                                              "and students read their scores and letters from them")

    @field_validator("base_url")
    @classmethod
    def _plain_http_url(cls, value: str) -> str:
        url = urlsplit(value)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError("base_url must be an http(s) URL")
        if url.username or url.password or url.query or url.fragment:
            raise ValueError("base_url must carry no credentials, query or fragment: name the key's variable "
                             "in api_key_env")
        return value

    def api_key(self) -> SecretStr | None:
        """The key from the server environment; None when the endpoint needs none."""
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        return SecretStr(value) if value else None


class AgentSettings(LayerSettings):
    """The agents layer's settings, read from the environment: provider keys, endpoints, timeouts,
    retry policy, default models, local-model and checkpoint locations."""

    model_config = SettingsConfigDict(populate_by_name=True)
    renamed_variables = {"ITEMSMITH_API_ENDPOINTS": "ITEMSMITH_ENDPOINTS"}

    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_OPENAI_API_KEY", "OPENAI_API_KEY", "openai_api_key"),
        description="OpenAI's API key; set, the default generator is OpenAI's")
    anthropic_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY", "anthropic_api_key"),
        description="Anthropic's API key; set (and no OpenAI key), the default generator is Anthropic's")
    endpoints: dict[EndpointName, ModelEndpoint] = Field(
        default_factory=dict, description="named OpenAI-compatible endpoints (JSON: name -> {base_url, api_key_env, timeout_s, "
                    "max_retries, retry_timeouts, max_concurrency})")
    provider_calls: dict[str, CallPolicy] = Field(
        default_factory=dict, description="timeout and retries per provider (JSON: provider -> {timeout_s, "
                                          "max_retries, retry_timeouts})")
    scripted_dir: Path | None = Field(
        None, description="the folder `scripted:NAME` specs read from; unset, a service refuses them and the "
                          "command line reads the path given")

    generator: ModelSpecField | None = Field(None, description="default generator spec; else chosen from the keys "
                                                               "present")
    planner: ModelSpecField | None = Field(None, description="default planner spec; else the generator")
    solver: ModelSpecField | None = Field(None, description="default re-derivation solver spec; else the run's "
                                                            "generator (the local model offline, the hosted one when "
                                                            "configured)")
    judge_validations: Path | None = Field(
        None, description="the judge validations file (`itemsmith judges validate` writes it); default: "
                          "judge_validations.json in the data folder")
    min_judge_auc: float = Field(
        0.7, gt=0.5, le=1, description="a judge's scores decide only when its measured separation of good and "
                                       "flawed templates (AUC of its mean score, `itemsmith judges validate`) reaches "
                                       "this; any other judge is advisory")
    ladder_validations: Path | None = Field(
        None, description="the student ladder validations file (`itemsmith judges validate-ladder` writes it); default: "
                          "ladder_validations.json in the data folder")
    min_ladder_auc: float = Field(
        0.7, gt=0.5, le=1, description="a ladder of local students filters only when its measured separation (the "
                                       "probability that a stronger student beats a weaker one on a template, "
                                       "`itemsmith judges validate-ladder`) reaches this; any other is advisory")
    advisory_students: Literal["skip", "run"] = Field(
        "skip", description="what an advisory ladder does: skip (no student answers; the run says so) or run (it "
                            "answers and filters as a validated one, `itemsmith author --run-advisory-students`)")
    default_judges: list[ModelSpecField] = Field(
        default_factory=lambda: list(DEFAULT_LOCAL_JUDGES),
        description="the judge panel of a run that names none (JSON list of specs; []: no panel by default); a "
                    "local model that is not installed is left out")
    default_students: list[StudentSpec] = Field(
        default_factory=lambda: list(DEFAULT_LOCAL_STUDENTS),
        description="the student ladder of a run that names none (JSON list of SPEC@RANK; []: no pool by default); "
                    "a local model that is not installed is left out")

    request_timeout_s: float = Field(120.0, gt=0, le=3600, description="per LLM call, API providers")
    local_timeout_s: float = Field(900.0, gt=0, le=7200, description="per LLM call, in-process models")
    max_retries: int = Field(3, ge=0, le=10, description="retries of a transient provider error (429, 5xx, timeout)")
    backoff_initial_s: float = Field(1.0, ge=0, le=60, description="first wait before a retry")
    backoff_max_s: float = Field(30.0, ge=0, le=600, description="longest wait between retries")
    max_retry_wait_s: float = Field(
        300.0, ge=0, le=3600, description="all the waits of one call together: the backoff and the waits a rate "
                                          "limit asks for (Retry-After, x-ratelimit-reset-*); a longer one ends the "
                                          "call as failed")

    temperature: float = Field(0.2, ge=0, le=2, description="sampling temperature of the generator and planner, sent only to models that "
                                                                 "accept it (model table)")
    max_output_tokens: int = Field(1500, ge=16, le=32000, description="reply cap of hosted models")
    reasoning_budget_tokens: dict[str, ReasoningTokens] = Field(
        default_factory=lambda: dict(DEFAULT_REASONING_BUDGETS),
        description="hidden reasoning tokens a reasoning model (gpt-5, o-series) may spend per role, added to the "
                    "role's reply budget in max_completion_tokens (JSON: role -> tokens; roles: planner, generator, "
                    "judge, student, solver; an unnamed role gets the student's)")
    reasoning_effort: str | None = Field(
        "low", description="reasoning_effort sent to reasoning models (none: the model's default)")
    openai_base_url: str | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_OPENAI_BASE_URL", "OPENAI_BASE_URL", "openai_base_url"),
        description="where openai: models are called (a proxy or gateway speaking OpenAI's API); default OpenAI's")
    anthropic_base_url: str | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL", "anthropic_base_url"),
        description="where anthropic: models are called (a proxy or gateway); default Anthropic's")

    model_cache_dir: Path = Field(Path("~/.cache/itemsmith/models").expanduser(),
                                  description="where split GGUF parts are assembled and verified")
    local_n_threads: int = Field(
        default_factory=lambda: min(8, os.cpu_count() or 1), ge=1, le=256,
        description="llama.cpp threads of each local model (default: the CPUs, at most 8; waiting threads sleep, "
                    "OMP_WAIT_POLICY=PASSIVE; 1 where several local models run at once on few cores)")
    local_n_ctx: int = Field(8192, ge=512, le=131072, description="llama.cpp context window")
    local_max_output_tokens: int = Field(1024, ge=16, le=8192, description="reply cap of in-process models")
    local_prompt_lookup_tokens: int = Field(
        8, ge=0, le=64, description="prompt-lookup decoding: most tokens drafted per step from an earlier occurrence "
                                    "of the last n-gram in the conversation, checked in one pass (0: off). Fewer "
                                    "where this machine's batched pass would round differently from one token at a "
                                    "time (measured per model on first use), so replies are the same with it or not")
    local_repeat_stop: int = Field(
        8, ge=0, le=1000, description="end a local reply at this many copies in a row of one block (a line or up to "
                                      "4 comma/line pieces, numbers aside, 24+ characters) instead of at the output "
                                      "cap (0: never)")
    local_prompt_cache_mb: int = Field(
        1024, ge=0, le=65536, description="llama.cpp states of earlier chat calls kept per model file, so a slot's "
                                          "next round reads only its new tokens after a judge used the model (0: none)")

    checkpoint_url: str | None = Field(
        None, description="SQLite path or postgresql:// URL; default: <out>/checkpoints.sqlite")

    def default_generator(self) -> ModelSpec:
        """The configured generator, else a hosted model when its key is set, else the local model."""
        if self.generator:
            return self.generator
        if self.openai_api_key is not None:
            return DEFAULT_OPENAI_GENERATOR
        if self.anthropic_api_key is not None:
            return DEFAULT_ANTHROPIC_GENERATOR
        return DEFAULT_LOCAL_GENERATOR

    def reasoning_budget(self, role: str) -> int:
        """Hidden reasoning tokens allowed to a reasoning model in `role`."""
        budgets = self.reasoning_budget_tokens
        return budgets.get(role, budgets.get("student", DEFAULT_REASONING_BUDGETS["student"]))

    @field_validator("openai_base_url", "anthropic_base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        url = urlsplit(value)
        if url.scheme not in ("http", "https") or not url.hostname or url.username or url.password:
            raise ValueError("a provider base URL must be an http(s) URL without credentials")
        return value

    def call_policy(self, provider: str, endpoint: ModelEndpoint | None = None) -> CallPolicy:
        """The effective policy of a provider's calls (through `endpoint`, if one): every field set
        except `max_retries`, which stays None where the caller's retry policy applies."""
        layers = [layer for layer in (endpoint, self.provider_calls.get(provider), BUILTIN_CALL_POLICIES.get(provider))
                  if layer is not None]

        def first(field: str, default: Any) -> Any:
            return next((getattr(layer, field) for layer in layers if getattr(layer, field) is not None), default)

        timeout = self.local_timeout_s if provider == "local" else self.request_timeout_s
        return CallPolicy(timeout_s=first("timeout_s", timeout), max_retries=first("max_retries", None),
                          retry_timeouts=first("retry_timeouts", True))


def get_settings() -> AgentSettings:
    """Fresh settings from the environment (cheap; read on every call so tests can patch env); a
    malformed variable is a `SettingsError` that names it."""
    try:
        return AgentSettings()
    except InvalidSettings as exc:
        raise SettingsError(str(exc)) from None
