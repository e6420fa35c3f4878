"""The model table: one rule per test, each checked against what the providers' clients send or
against an independent source (LangChain's model profiles, from models.dev)."""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import pytest
from langchain_anthropic.data._profiles import _PROFILES as ANTHROPIC_PROFILES
from langchain_core.messages import HumanMessage
from langchain_openai.data._profiles import _PROFILES as OPENAI_PROFILES
from pydantic import ValidationError

from itemsmith.agents.llm import catalog
from itemsmith.agents.llm.catalog import (
    CATALOG_FILE,
    MODEL_TABLE,
    UNKNOWN_DEFAULTS,
    Price,
    _notice,
    _read,
    entry_for,
    price_for,
)
from itemsmith.agents.llm.providers import ModelOptions, make_model
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.llm.usage import cost_of
from itemsmith.agents.settings import AgentSettings

SETTINGS = AgentSettings(openai_api_key="sk-test-000000", anthropic_api_key="sk-ant-test-000000")


def _payload(spec: str, role: str = "judge", max_tokens: int = 512) -> dict:
    """The request body the client sends (fields LangChain passes as ``extra_body`` included)."""
    handle = make_model(ModelSpec.parse(spec), options=ModelOptions(max_tokens=max_tokens, role=role),
                        settings=SETTINGS)
    payload = dict(handle.model._get_request_payload([HumanMessage("hi")]))
    return {**(payload.pop("extra_body", None) or {}), **payload}


def test_temperature_is_sent_only_where_the_independent_profiles_allow_it() -> None:
    for key, entry in MODEL_TABLE.items():
        provider, model = key.split(":", 1)
        profiles = OPENAI_PROFILES if provider == "openai" else ANTHROPIC_PROFILES
        profile = profiles.get(model) or {}
        if entry.capabilities.temperature:  # never send what the API rejects
            assert profile.get("temperature", True), key


def test_reasoning_flags_match_the_independent_profiles() -> None:
    for key, entry in MODEL_TABLE.items():
        provider, model = key.split(":", 1)
        if provider == "openai" and model in OPENAI_PROFILES and "reasoning_output" in OPENAI_PROFILES[model]:
            assert entry.capabilities.reasoning == OPENAI_PROFILES[model]["reasoning_output"], key


@pytest.mark.parametrize("spec", ["openai:o1", "openai:o3", "openai:o4-mini", "openai:gpt-5-mini"])
def test_reasoning_models_get_no_temperature_and_a_budget_with_room_to_reason(spec: str) -> None:
    payload = _payload(spec, role="student", max_tokens=512)
    assert "temperature" not in payload and "top_p" not in payload
    assert payload["max_completion_tokens"] == 512 + SETTINGS.reasoning_budget("student")
    assert payload["reasoning_effort"] == "low"


def test_reasoning_budget_is_set_per_role_in_settings() -> None:
    settings = SETTINGS.model_copy(update={"reasoning_budget_tokens": {"judge": 9000, "student": 100}})
    handle = make_model(ModelSpec.parse("openai:gpt-5"), options=ModelOptions(max_tokens=600, role="judge"),
                        settings=settings)
    assert handle.model._get_request_payload([HumanMessage("hi")])["max_completion_tokens"] == 9600
    assert settings.reasoning_budget("planner") == 100  # an unnamed role gets the student's


def test_plain_models_get_temperature_and_the_reply_budget_only() -> None:
    payload = _payload("openai:gpt-4o-mini", max_tokens=512)
    assert payload["temperature"] == SETTINGS.temperature and payload["max_completion_tokens"] == 512
    assert "reasoning_effort" not in payload


def test_claude_opus_4_7_gets_no_temperature_and_sonnet_does() -> None:
    assert "temperature" not in _payload("anthropic:claude-opus-4-7")
    assert _payload("anthropic:claude-sonnet-4-5")["temperature"] == SETTINGS.temperature


def test_openai_compatible_sends_max_tokens_not_max_completion_tokens() -> None:
    payload = _payload("openai_compatible:tiny@http://127.0.0.1:1/v1", max_tokens=8)
    assert payload["max_tokens"] == 8 and "max_completion_tokens" not in payload


def test_logprobs_only_where_the_model_returns_them() -> None:
    assert entry_for("openai", "gpt-4o").capabilities.logprobs
    assert not entry_for("openai", "gpt-5").capabilities.logprobs
    assert not any(e.capabilities.logprobs for k, e in MODEL_TABLE.items() if k.startswith("anthropic:"))


def test_prices_are_exact_ids_never_a_family_prefix(caplog: pytest.LogCaptureFixture) -> None:
    assert price_for("openai", "gpt-5-pro") != price_for("openai", "gpt-5")
    _notice.cache_clear()  # one notice per process: this test wants to see it
    with caplog.at_level(logging.WARNING, logger="itemsmith.models"):
        assert price_for("openai", "gpt-5.4") is None  # not in the table: unknown, not gpt-5's
        entry = entry_for("openai", "gpt-5.4")
    assert not entry.known and entry.capabilities == UNKNOWN_DEFAULTS["openai"]
    assert "not in itemsmith's model table" in caplog.text
    dated = price_for("anthropic", "claude-sonnet-4-5-20250929")  # a dated snapshot is its base id
    assert dated == price_for("anthropic", "claude-sonnet-4-5")


def test_opus_4_5_and_later_cost_5_and_25_and_opus_4_1_15_and_75() -> None:
    for model in ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7"):
        price = price_for("anthropic", model)
        assert price is not None and (price.input, price.output) == (5.0, 25.0)
    old = price_for("anthropic", "claude-opus-4-1")
    assert old is not None and (old.input, old.output) == (15.0, 75.0)


def test_cached_reads_and_cache_writes_are_priced_apart() -> None:
    # gpt-5-mini: 10k prompt tokens, 9k of them cached; 1k output
    full = 10_000 * 0.25 / 1e6 + 1_000 * 2.0 / 1e6
    cached = cost_of("openai", "gpt-5-mini", 10_000, 1_000, cached_tokens=9_000)
    assert cached == pytest.approx((1_000 * 0.25 + 9_000 * 0.025 + 1_000 * 2.0) / 1e6)
    assert cached is not None and cached < full
    # Sonnet: a cache write costs 1.25x the input rate, a read 0.1x
    write = cost_of("anthropic", "claude-sonnet-4-5", 5_000, 0, cache_write_tokens=5_000)
    read = cost_of("anthropic", "claude-sonnet-4-5", 5_000, 0, cached_tokens=5_000)
    assert write == pytest.approx(5_000 * 3.75 / 1e6) and read == pytest.approx(5_000 * 0.30 / 1e6)


def test_price_never_goes_negative_when_a_provider_overreports_cache_tokens() -> None:
    price = Price(input=1.0, cached_input=0.1, output=2.0)
    assert price.cost(100, 0, cached_tokens=150) == pytest.approx(150 * 0.1 / 1e6)


def test_local_and_scripted_models_cost_nothing_and_compatible_servers_are_unknown() -> None:
    assert cost_of("local", "qwen2.5-coder-1.5b", 10, 10) == 0.0
    assert cost_of("openai_compatible", "mystery", 10, 10) is None


def test_the_table_file_ships_inside_the_package() -> None:
    pyproject = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())
    assert CATALOG_FILE.name in pyproject["tool"]["setuptools"]["package-data"]["itemsmith.agents.llm"]
    assert CATALOG_FILE.parent == Path(catalog.__file__).parent and CATALOG_FILE.is_file()


def test_a_model_of_a_family_the_file_lacks_is_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "catalog.toml"
    bad.write_text(CATALOG_FILE.read_text().replace('family = "gpt4"', 'family = "gpt-4"', 1))
    with pytest.raises(ValueError, match="no family 'gpt-4'"):
        _read(bad)


def test_a_misspelt_price_field_is_refused_not_read_as_unknown(tmp_path: Path) -> None:
    bad = tmp_path / "catalog.toml"
    bad.write_text(CATALOG_FILE.read_text().replace("cached_input =", "cached_inpt =", 1))
    with pytest.raises(ValidationError, match="cached_inpt"):
        _read(bad)
