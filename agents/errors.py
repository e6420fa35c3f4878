"""Errors of the authoring agents."""

from __future__ import annotations


class AgentError(RuntimeError):
    """Base of the agents' errors."""


class ProviderConfigError(AgentError):
    """A model spec cannot be turned into a chat model (unknown provider, missing key or extra)."""


class LocalModelUnavailable(ProviderConfigError):
    """The local model's extra (llama-cpp-python) or its model packages are not installed, or a
    model file does not match its pinned sha256."""


class SettingsError(AgentError):
    """An ``ITEMSMITH_*`` variable of the agents' settings is malformed (e.g. a model spec)."""


class ProviderCallError(AgentError):
    """An LLM call failed: a permanent error, or a transient one that outlived its retries."""

    def __init__(self, message: str, *, transient: bool = False, attempts: int = 1) -> None:
        super().__init__(message)
        self.transient = transient
        self.attempts = attempts


class EmptyReplyError(AgentError):
    """The model returned no text (never passed on as an empty result)."""


class PlanningError(AgentError):
    """The planner produced no usable brief."""
