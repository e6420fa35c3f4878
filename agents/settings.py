"""Settings of the authoring agents (pydantic-settings, env prefix ``ITEMSMITH_``).

API keys are `SecretStr`: they never appear in a repr, a log line or a report. Each key is
also read from the provider's usual variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_LOCAL_GENERATOR = "local:qwen2.5-coder-1.5b"
DEFAULT_OPENAI_GENERATOR = "openai:gpt-4o"
DEFAULT_ANTHROPIC_GENERATOR = "anthropic:claude-sonnet-4-5"


class AgentSettings(BaseSettings):
    """Provider keys, timeouts, retry policy, local-model and checkpoint locations."""

    model_config = SettingsConfigDict(env_prefix="ITEMSMITH_", extra="ignore", populate_by_name=True)

    openai_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_OPENAI_API_KEY", "OPENAI_API_KEY", "openai_api_key"))
    anthropic_api_key: SecretStr | None = Field(
        None, validation_alias=AliasChoices("ITEMSMITH_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY", "anthropic_api_key"))
    openai_compatible_api_key: SecretStr | None = Field(
        None, description="key for an OpenAI-compatible server (most local servers need none)")

    generator: str | None = Field(None, description="default generator spec; else chosen from the keys present")
    planner: str | None = Field(None, description="default planner spec; else the generator")

    request_timeout_s: float = Field(120.0, gt=0, le=3600, description="per LLM call, API providers")
    local_timeout_s: float = Field(900.0, gt=0, le=7200, description="per LLM call, in-process models")
    max_retries: int = Field(3, ge=0, le=10, description="retries of a transient provider error (429, 5xx, timeout)")
    backoff_initial_s: float = Field(1.0, ge=0, le=60)
    backoff_max_s: float = Field(30.0, ge=0, le=600)

    temperature: float = Field(0.2, ge=0, le=2)
    max_output_tokens: int = Field(1500, ge=16, le=32000)

    model_cache_dir: Path = Field(Path("~/.cache/itemsmith/models").expanduser(),
                                  description="where split GGUF parts are assembled and verified")
    local_n_threads: int = Field(1, ge=1, le=256, description="llama.cpp threads (1: spinning threads collapse "
                                                                "throughput on a shared CPU)")
    local_n_ctx: int = Field(8192, ge=512, le=131072, description="llama.cpp context window")
    local_max_output_tokens: int = Field(1024, ge=16, le=8192, description="reply cap of in-process models")

    checkpoint_url: str | None = Field(
        None, description="SQLite path or postgresql:// URL; default: <out>/checkpoints.sqlite")

    def default_generator(self) -> str:
        """The configured generator, else a hosted model when its key is set, else the local model."""
        if self.generator:
            return self.generator
        if self.openai_api_key is not None:
            return DEFAULT_OPENAI_GENERATOR
        if self.anthropic_api_key is not None:
            return DEFAULT_ANTHROPIC_GENERATOR
        return DEFAULT_LOCAL_GENERATOR


def get_settings() -> AgentSettings:
    """Fresh settings from the environment (cheap; read on every call so tests can patch env)."""
    return AgentSettings()
