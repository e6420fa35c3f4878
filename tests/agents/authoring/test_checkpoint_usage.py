"""Checkpointer selection and the usage callback."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from itemsmith.agents.authoring.checkpoint import open_checkpointer
from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.usage import UsageCallback, UsageLedger


def test_sqlite_checkpointer_is_the_default(tmp_path: Path) -> None:
    async def open_default() -> str:
        async with open_checkpointer(None, default_path=tmp_path / "sub" / "ck.sqlite") as saver:
            return type(saver).__name__
    assert asyncio.run(open_default()) == "AsyncSqliteSaver"
    assert (tmp_path / "sub" / "ck.sqlite").is_file()


def test_postgres_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # a None entry in sys.modules makes the import fail as if the extra were not installed
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres.aio", None)
    async def open_pg() -> None:
        async with open_checkpointer("postgresql://u@localhost/db", default_path=Path("x")):
            pass
    with pytest.raises(ProviderConfigError, match=r"itemsmith\[postgres\]"):
        asyncio.run(open_pg())


def test_usage_callback_records_provider_usage() -> None:
    ledger = UsageLedger()
    callback = UsageCallback(ledger, provider="openai", model="gpt-4o-mini", role="judge")
    message = AIMessage("hi", usage_metadata={"input_tokens": 1000, "output_tokens": 500, "total_tokens": 1500})
    callback.on_llm_end(LLMResult(generations=[[ChatGeneration(message=message)]]))
    totals = ledger.totals()
    assert (totals.calls, totals.input_tokens, totals.output_tokens) == (1, 1000, 500)
    assert totals.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1e6)
    raw = AIMessage("x", response_metadata={"token_usage": {"prompt_tokens": 7, "completion_tokens": 3}})
    UsageCallback(ledger, provider="mystery", model="m").on_llm_end(LLMResult(generations=[[ChatGeneration(message=raw)]]))
    assert ledger.totals().input_tokens == 1007 and ledger.totals().cost_usd is None  # unknown price stays unknown
