"""What the hosted providers (`openai`, `anthropic`) share: a key from the environment, the model
table's capabilities (a model the table lacks must exist at the provider), and what the table lets
a call send."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from pydantic import SecretStr

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.catalog import Capabilities, entry_for
from itemsmith.agents.llm.providers.base import ModelOptions, Provider, max_tokens, temperature
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings

__all__ = ["HostedProvider", "sampling"]


@cache
def _provider_has_model(provider: str, base_url: str | None, key: str, model: str) -> str | None:
    """For a model the table lacks: the provider's own "no such model" message, None when it has it
    (or cannot say now: the calls will report that). Asked once per process."""
    import anthropic
    import openai

    from itemsmith.agents.llm.inference import redact

    try:
        if provider == "openai":
            openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=10).models.retrieve(model)
        else:
            anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=0, timeout=10).models.retrieve(model)
    except (openai.NotFoundError, anthropic.NotFoundError) as exc:
        return redact(" ".join(str(exc).split()))[:300]
    except Exception:  # noqa: BLE001 - unreachable or not listing models: the calls say more
        return None
    return None


class HostedProvider(Provider):
    """A provider with an API key (``<name>_api_key`` in the settings, also read from `key_variable`)
    and a base URL (``<name>_base_url``)."""

    key_variable: ClassVar[str]

    def missing_credentials(self, spec: ModelSpec, settings: AgentSettings) -> str | None:
        if self.key(settings) is None:
            return f"{self.name} models need {self.key_variable} (or ITEMSMITH_{self.key_variable})"
        return None

    def key(self, settings: AgentSettings) -> SecretStr | None:
        key: SecretStr | None = getattr(settings, f"{self.name}_api_key")
        return key

    def base_url(self, settings: AgentSettings) -> str | None:
        url: str | None = getattr(settings, f"{self.name}_base_url")
        return url

    def capabilities(self, spec: ModelSpec, settings: AgentSettings) -> Capabilities:
        """The table's capabilities; a model it lacks must exist at the provider (a clear error before
        any work), then gets the conservative defaults."""
        entry = entry_for(self.name, spec.model)
        key = self.key(settings)
        assert key is not None  # `build` checked the credentials first
        if not entry.known and (missing := _provider_has_model(self.name, self.base_url(settings),
                                                                key.get_secret_value(), spec.model)):
            raise ProviderConfigError(f"{self.name} has no model {spec.model!r} (not in itemsmith's model table "
                                      f"either): {missing}")
        return entry.capabilities


def sampling(capabilities: Capabilities, options: ModelOptions, settings: AgentSettings) -> dict[str, Any]:
    """What the model table lets a hosted call send: temperature only where accepted; a reasoning
    model's completion budget holds its role's reasoning tokens, and its effort is set."""
    budget = max_tokens(options, settings)
    sent: dict[str, Any] = {}
    if capabilities.temperature:
        sent["temperature"] = temperature(options, settings)
    if capabilities.reasoning:
        budget += settings.reasoning_budget(options.role)
        if settings.reasoning_effort is not None:
            sent["reasoning_effort"] = settings.reasoning_effort
    sent["max_tokens"] = budget
    return sent
