"""Contract tests against local fakes of the OpenAI and Anthropic APIs that enforce their published
rules (`fake_providers`), through the real model factory and LangChain clients: reasoning budgets,
temperature rules, a 429 window with Retry-After, prompt caching and cost against the fake's bill,
and the reply cap on the emulated vLLM and Ollama servers."""

from __future__ import annotations

import pytest

from . import hosted_scenarios as scenarios


def test_fake_gpt5_students_answer_within_the_reasoning_budget_and_cost_what_the_fake_bills() -> None:
    measured = scenarios.reasoning_budget(3)
    assert measured["answered"] == measured["calls_sent"] == 6 and measured["stored_responses"] == 6
    assert measured["cut"] == measured["failed"] == 0 and measured["stage"] != "errored"
    assert measured["cost_ratio"] == pytest.approx(1.0, abs=0.01)


def test_fake_gpt5_students_without_room_to_reason_are_missing_data_not_wrong_answers() -> None:
    # the old budget: the reply cap alone, reasoning at the model's default effort fills it
    measured = scenarios.reasoning_budget(3, reasoning_budget_tokens=0, effort=None)
    assert measured["cut"] == measured["calls_sent"] == 6 and measured["answered"] == 0
    assert measured["stored_responses"] == 0 and measured["not_answered"] == 6
    assert measured["stage"] == "errored"  # retryable, never 'all_poor'
    assert measured["cost_ratio"] == pytest.approx(1.0, abs=0.01)  # cut calls are billed and metered


def test_fake_judges_that_reject_temperature_are_never_sent_it() -> None:
    measured = scenarios.temperature_rules(2)
    assert measured["http_errors"] == {} and measured["failed"] == 0
    assert measured["scores"] == 5 * 5 and measured["stage"] == "accepted"
    assert measured["cost_ratio"] == pytest.approx(1.0, abs=0.01)


def test_fake_429_window_is_waited_out_as_the_provider_asks() -> None:
    measured = scenarios.rate_limit_window(1.5)
    assert measured["http_errors"]["429"] > 0 and measured["failed"] == 0
    assert measured["wall_s"] >= 1.5 and measured["stage"] == "accepted"
    assert measured["cost_ratio"] == pytest.approx(1.0, abs=0.01)


def test_fake_429_window_beyond_the_wait_bound_errors_the_stage_without_feedback() -> None:
    measured = scenarios.rate_limit_window(30, max_wait_s=1)
    assert measured["failed"] == measured["calls_sent"] and measured["answered"] == 0
    assert measured["wall_s"] < 30  # not waited: the bound says so at once
    assert measured["stage"] == "errored" and measured["feedback"] is None  # not 'rejected as content'


def test_fake_cached_prompts_are_counted_and_priced_apart() -> None:
    measured = scenarios.cached_prompts(2)
    assert measured["cached_input_tokens"] > 0 and measured["cache_write_tokens"] > 0
    assert measured["failed"] == 0 and measured["cost_ratio"] == pytest.approx(1.0, abs=0.01)


def test_fake_provider_without_the_model_is_a_clear_error_before_any_call() -> None:
    from itemsmith.agents.errors import ProviderConfigError
    from itemsmith.agents.llm.factory import build_judges
    from itemsmith.agents.llm.spec import ModelSpec

    with scenarios.fakes() as (fake, settings):
        with pytest.raises(ProviderConfigError, match=r"openai has no model 'gpt-5-typo'.*does not exist"):
            build_judges([ModelSpec.parse("openai:gpt-5-typo")], settings=settings)
        with pytest.raises(ProviderConfigError, match=r"anthropic has no model 'claude-sonnet-9'"):
            build_judges([ModelSpec.parse("anthropic:claude-sonnet-9")], settings=settings)
        assert not [c for c in fake.calls if c.api in ("openai", "anthropic")]  # no chat call was sent


def test_fake_provider_model_missing_from_the_table_gets_defaults_and_works() -> None:
    from itemsmith.agents.llm.factory import build_judges
    from itemsmith.agents.llm.spec import ModelSpec

    with scenarios.fakes() as (fake, settings):
        judge = build_judges([ModelSpec.parse("openai:gpt-5.4")], settings=settings)[0]  # the provider has it, the table not
        assert judge.model.capabilities is not None and judge.model.capabilities.reasoning
        assert not judge.model.capabilities.temperature


def test_fake_vllm_and_ollama_get_the_cap_as_max_tokens_and_stop_at_it() -> None:
    measured = scenarios.compatible_cap(64)
    assert measured["caps_received"] == {"vllm": [64], "ollama": [64]}
    assert not measured["max_completion_tokens_sent"]  # Ollama would ignore it and run uncapped
    assert measured["answered"] == measured["calls_sent"] == measured["stored_responses"] == 6
    assert measured["stage"] != "errored"


def test_fake_vllm_and_ollama_reply_cut_at_the_cap_is_missing_data_not_an_answer() -> None:
    measured = scenarios.compatible_cap(8)  # the students' replies need 12 tokens
    assert measured["caps_received"] == {"vllm": [8], "ollama": [8]} and measured["longest_reply_tokens"] <= 8
    assert measured["cut"] == measured["calls_sent"] == 6 and measured["answered"] == 0
    assert measured["stored_responses"] == 0 and measured["stage"] == "errored"  # no wrong answers stored
