"""Saved prompt states of local chat models (`agents.llm.providers.llamacpp.PromptStates`): which state a prompt
gets back, and what the capacity keeps. llama.cpp's state calls are replaced by a fake context
whose "KV cache" is the token list it holds (the real model: tests/agents/llm/providers/test_local.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

llama_cpp = pytest.importorskip("llama_cpp")

from itemsmith.agents.llm.providers.llamacpp import PromptStates  # noqa: E402

TOKEN_BYTES = 10  # the fake state's size per held token


class FakeLlama:
    """What `PromptStates` reads of a `Llama`: its context, evaluated tokens and their count."""

    def __init__(self) -> None:
        self.ctx: list[int] = []  # the fake KV cache: the tokens it holds
        self.input_ids = np.zeros(64, dtype=np.intc)
        self.n_tokens = 0
        self._requires_eval = False

    def evaluate(self, tokens: list[int]) -> None:
        self.ctx[:] = tokens
        self.input_ids[:len(tokens)] = tokens
        self.n_tokens = len(tokens)


@pytest.fixture(autouse=True)
def fake_state_calls(monkeypatch) -> None:
    def encoded(ctx: list[int]) -> bytes:
        return b"".join(int(t).to_bytes(TOKEN_BYTES, "little") for t in ctx)

    def get_size(ctx: list[int]) -> int:
        return len(encoded(ctx)) + 100  # llama.cpp reports an upper bound

    def get_data(ctx: list[int], buffer: Any, size: int) -> int:
        data = encoded(ctx)
        buffer[:len(data)] = list(data)
        return len(data)

    def set_data(ctx: list[int], buffer: Any, size: int) -> int:
        data = bytes(buffer)[:size]
        ctx[:] = [int.from_bytes(data[i:i + TOKEN_BYTES], "little") for i in range(0, size, TOKEN_BYTES)]
        return size

    monkeypatch.setattr(llama_cpp, "llama_state_get_size", get_size)
    monkeypatch.setattr(llama_cpp, "llama_state_get_data", get_data)
    monkeypatch.setattr(llama_cpp, "llama_state_set_data", set_data)


def test_a_prompt_gets_back_the_saved_state_that_shares_its_longest_prefix() -> None:
    llama, states = FakeLlama(), PromptStates(10_000)
    slot_a, slot_b, judge = [1, 2, 3, 4, 5, 6], [1, 2, 9, 9], [7, 7, 7]
    for tokens in (slot_a, slot_b, judge):
        llama.evaluate(tokens)
        states.save(llama)
    next_round_a = [*slot_a, 8, 8]
    assert states.restore(llama, next_round_a) == len(slot_a)
    assert llama.ctx == slot_a and list(llama.input_ids[:llama.n_tokens]) == slot_a and llama._requires_eval
    # the same prompt again: all but its last token (whose logits are needed) is held
    assert states.restore(llama, slot_a) == len(slot_a) - 1


def test_the_live_cache_is_kept_when_it_holds_more_than_any_saved_state() -> None:
    llama, states = FakeLlama(), PromptStates(10_000)
    llama.evaluate([1, 2])
    states.save(llama)
    llama.evaluate([1, 2, 3, 4])  # evaluated after the save (e.g. a judge's prompt)
    assert states.restore(llama, [1, 2, 3, 4, 5]) == 4 and llama.ctx == [1, 2, 3, 4]
    assert states.restore(llama, [6, 6]) == 0 and llama.ctx == [1, 2, 3, 4]


def test_the_capacity_keeps_the_most_recently_used_states() -> None:
    llama = FakeLlama()
    states = PromptStates(3 * 4 * TOKEN_BYTES)  # three states of four tokens
    for first in (1, 2, 3):
        llama.evaluate([first] * 4)
        states.save(llama)
    states.restore(llama, [1, 1, 1, 1, 0])  # used again: now the most recent
    llama.evaluate([4] * 4)
    states.save(llama)  # the fourth state drops the least recently used one, [2] * 4
    assert states.size_bytes == 3 * 4 * TOKEN_BYTES
    llama.evaluate([])
    assert states.restore(llama, [2, 2, 2, 2, 0]) == 0
    assert states.restore(llama, [1, 1, 1, 1, 0]) == 4
    llama.evaluate([5] * 20)
    states.save(llama)  # larger than the whole capacity: not kept, nothing else dropped
    assert states.size_bytes == 3 * 4 * TOKEN_BYTES
    states.resize(0)
    assert states.size_bytes == 0 and states.restore(llama, [1, 1, 1, 1, 0]) == 0
    states.save(llama)
    assert states.size_bytes == 0
