"""In-process llama.cpp models (``llama-cpp-python``, the ``local`` extra): a chat model, a
letter scorer for log-likelihood students and a score reader for single-pass judges.

One `Llama` per model file is loaded lazily and shared by every chat model that uses the file
(a planner and a generator share the weights); calls to one `Llama` are serialized by a lock.
A cancelled call (a timeout) stops generation at the next token. A chat call saves llama.cpp's
state (the KV cache of its prompt and reply) in `PromptStates`, so a later prompt that extends it
(a slot's next round, after other slots or a judge have used the model) evaluates only what is
new. Usage comes from llama.cpp's own token counts; inside `agents.llm.inference.stream_tokens` every
sampled token is reported as it is sampled (the live progress of a long call on CPU). Greedy or
seeded sampling gives the same text for the same prompt.

Two things make replies cheaper on CPU. Prompt lookup (`prompt_lookup_tokens`): llama-cpp-python's
`LlamaPromptLookupDecoding` drafts the next tokens from an earlier occurrence of the last n-gram in
the prompt or reply (a template copies the skeleton; a refinement copies the earlier code) and one
forward pass checks them all. It is lossless: `exact_decoding` measures once per loaded model how
this machine's kernels must be driven so that a batch gives each position the very logits of
decoding it alone (on AVX2 with two threads, the Qwen models: every step at least two positions
wide, a lone token padded, and at most two drafted tokens), so a reply is byte-identical with and
without lookup. A repetition stop (`repeat_stop`) ends a reply that repeats a block over and over
at the N-th copy instead of at the output cap.
"""

from __future__ import annotations

import asyncio
import ctypes
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from itemsmith.agents.errors import LocalModelUnavailable
from itemsmith.agents.extract import RUNAWAY_LINE_CHARS, RUNAWAY_REPEATS, repetition_shape
from itemsmith.agents.llm.inference import TokenCallback, token_listener

# llama.cpp's OpenMP threads spin while waiting by default, which collapses throughput when other
# processes share the CPU; must be set before the OpenMP runtime loads (first llama_cpp import).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class PromptStates:
    """llama.cpp states saved after chat calls, keyed by the tokens their KV cache holds, least
    recently used dropped beyond `capacity_bytes`.

    llama.cpp reuses only the prefix a prompt shares with the tokens it evaluated last; slots that
    take turns on one model (and judges between them) replace those, so each refinement round
    would evaluate its whole conversation again. `restore` loads the saved state that shares the
    longest prefix with a prompt when that beats what the model holds; llama-cpp-python then
    evaluates only the rest, as after its own prefix match. Only the KV cache is saved (its logits
    are recomputed from the last prompt token), about 28 kB a token for the 1.5B model.
    """

    def __init__(self, capacity_bytes: int = 0) -> None:
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self.capacity_bytes = capacity_bytes

    @property
    def size_bytes(self) -> int:
        return sum(len(state) for state in self._states.values())

    def resize(self, capacity_bytes: int) -> None:
        """Keep at most `capacity_bytes` of states (the least recently used go first)."""
        self.capacity_bytes = capacity_bytes
        while self._states and self.size_bytes > capacity_bytes:
            self._states.popitem(last=False)

    def restore(self, llama: Any, tokens: Sequence[int]) -> int:
        """Load the best saved state for `tokens` if it holds a longer prefix than the model does;
        the prefix length the model then holds."""
        import llama_cpp

        held = _cached_prefix(llama, tokens)
        best, best_length = None, held
        for key in self._states:
            length = _common_prefix(key, tokens)
            if length > best_length:
                best, best_length = key, length
        if best is None:
            return held
        state = self._states[best]
        self._states.move_to_end(best)
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(state)) != len(state):
            raise RuntimeError("llama.cpp refused a saved prompt state")
        llama.input_ids[:len(best)] = best
        llama.n_tokens = len(best)
        llama._requires_eval = True  # llama-cpp-python: logits come from a fresh decode, not the state
        return best_length

    def save(self, llama: Any) -> None:
        """Save what the model's KV cache holds now (its evaluated tokens)."""
        import llama_cpp

        if self.capacity_bytes <= 0 or llama.n_tokens == 0:
            return
        size = llama_cpp.llama_state_get_size(llama.ctx)
        buffer = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_get_data(llama.ctx, buffer, size)
        if written > self.capacity_bytes:
            return
        key = tuple(int(t) for t in llama.input_ids[:llama.n_tokens])
        self._states[key] = ctypes.string_at(buffer, written)
        self._states.move_to_end(key)
        self.resize(self.capacity_bytes)


@dataclass
class LoadedModel:
    """One model file in memory: llama.cpp, the lock that serializes its calls, its saved states
    and how it decodes so that drafts change no reply (`exact_decoding`, measured on first use)."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    states: PromptStates = field(default_factory=PromptStates)
    exact: dict[int, ExactDecoding] = field(default_factory=dict)  # probed draft limit -> its decoding

    def decoding(self, wanted: int) -> ExactDecoding:
        """How to decode with at most `wanted` drafted tokens a step (`exact_decoding`, probed
        once per limit). Call with `lock` held: the probe replaces the KV cache."""
        if wanted <= 0:
            return ExactDecoding()
        if wanted not in self.exact:
            self.exact[wanted] = exact_decoding(self.llama, wanted)
        return self.exact[wanted]


_LOADED: dict[tuple[str, int, int], LoadedModel] = {}
_LOAD_LOCK = threading.Lock()


def _lookup_llama_class() -> Any:
    """`Llama` that reads logits only where a token is sampled, so a draft model costs no memory.

    With a `draft_model`, llama-cpp-python forces `logits_all`: every prompt token gets its logits
    computed and copied into an n_ctx x n_vocab float array (5 GB for the 1.5B model at 8192 tokens,
    0.6 MB resident per evaluated token), and the chat models, judges and students sharing the
    instance would all pay for it. Here a batch of at most `SAMPLED_BATCH` tokens (a sampled token
    and its draft) has every position as an output, a longer one (a prompt) only its last, as
    without a draft. Sampling reads llama.cpp's own logits (`llama_get_logits_ith`), never
    `Llama.scores` (only logprobs would, which chat calls do not ask for). Written against
    llama-cpp-python 0.3.36 (pinned): `_ctx`, `_batch.set_batch`.
    """
    from llama_cpp import Llama

    class PromptLookupLlama(Llama):  # type: ignore[misc]
        min_width = 1  # a decoding step shorter than this is padded (`exact_decoding`); set per chat call
        _padding = 0  # positions after the last real token in the last batch

        def eval(self, tokens: Sequence[int]) -> None:
            self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
            self._padding = 0
            for i in range(0, len(tokens), self.n_batch):
                batch = list(tokens[i: min(len(tokens), i + self.n_batch)])
                n_past = self.n_tokens
                padded = _padded(batch, self.min_width)
                self._padding = len(padded) - len(batch)
                # every position an output when padded: llama.cpp would give only the last one (a pad) its logits
                self._batch.set_batch(batch=padded, n_past=n_past,
                                      logits_all=len(tokens) <= SAMPLED_BATCH or self._padding > 0)
                self._ctx.decode(self._batch)
                self.input_ids[n_past: n_past + len(batch)] = batch
                self.n_tokens += len(batch)
                self._requires_eval = False

        def sample(self, *args: Any, idx: int | None = None, **kwargs: Any) -> int:
            # llama-cpp-python reads a position's logits counting back from the batch's end: skip the pads
            return super().sample(*args, idx=None if idx is None else idx - self._padding, **kwargs)

    return PromptLookupLlama


SAMPLED_BATCH = 64  # a sampled token plus its draft never comes near this; a prompt that short is cheap anyway


def _load(path: str, n_ctx: int, n_threads: int) -> LoadedModel:
    key = (path, n_ctx, n_threads)
    with _LOAD_LOCK:
        if key not in _LOADED:
            try:
                llama_class = _lookup_llama_class()
            except ImportError:
                raise LocalModelUnavailable(
                    "local models need llama-cpp-python: pip install 'itemsmith[local]'") from None
            # flash attention: each query row is its own computation, which keeps batched and one-token
            # passes equal (`exact_decoding`); it also reads prompts about 10 % faster on CPU
            llama = llama_class(model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                                n_batch=512, seed=0, verbose=False, flash_attn=True)
            _LOADED[key] = LoadedModel(llama)
        return _LOADED[key]


PROBE_CODE = (b"def mean_of_window(values, start, length):\n    window = values[start:start + length]\n"
              b"    return sum(window) / len(window)\n\n\n")
PROBE_REPEATS = 9  # about 300 tokens: past 256 cached positions, where llama.cpp's one-query attention changes


@dataclass(frozen=True)
class ExactDecoding:
    """How a model decodes so that prompt lookup changes no reply: every step is evaluated as a
    batch of at least `min_width` positions (a lone token is padded) and carries at most `drafts`
    drafted tokens. ``drafts=0``: lookup is off for this model on this machine."""

    min_width: int = 1
    drafts: int = 0


def exact_decoding(llama: Any, limit: int, steps: int = 8) -> ExactDecoding:
    """The decoding under which drafted tokens (at most `limit`) are checked with the very logits
    that decoding them one at a time gives, bit for bit, on this machine and model.

    llama.cpp picks kernels by batch width (on AVX2 a 4-column kernel from 4 tokens on; a
    different attention path for one query once the cache passes 256 positions), and kernels
    round differently. The probe reads a 300-token code prompt, decodes `steps` tokens one step
    at a time (padded to the minimum width tried: 1, then 2), then evaluates the same tokens
    again in batches of each width up to `limit`+1 at every offset, and keeps the first minimum
    width with a draft and the widest width up to which every logit of every position is equal.
    It leaves the KV cache empty (the caller's prompt is evaluated afresh or restored from
    `PromptStates`)."""
    import numpy as np

    prompt = llama.tokenize(PROBE_CODE * PROBE_REPEATS, add_bos=False, special=False)

    def exact_drafts(start: int, min_width: int) -> int:
        sequence, single = [prompt[-1]], []
        for step in range(steps):
            logits = _decode_logits(llama, [sequence[-1]], start + step, min_width)[0]
            single.append(logits)
            sequence.append(int(logits.argmax()))
        exact = 0
        for width in range(2, min(limit + 1, steps) + 1):
            for offset in range(steps - width + 1):
                batched = _decode_logits(llama, sequence[offset:offset + width], start + offset, min_width)
                if not all(np.array_equal(a, b) for a, b in zip(batched, single[offset:offset + width], strict=True)):
                    return exact
            exact = width - 1
        return exact

    try:
        llama.reset()
        llama.eval(prompt[:-1])
        start = llama.n_tokens
        for min_width in (1, 2):
            if drafts := exact_drafts(start, min_width):
                return ExactDecoding(min_width=min_width, drafts=drafts)
        return ExactDecoding()
    finally:
        llama._ctx.kv_cache_seq_rm(-1, 0, -1)
        llama.reset()


def _padded(tokens: list[int], min_width: int) -> list[int]:
    """A decoding step as llama.cpp evaluates it: at least `min_width` positions, the last token
    repeated after it (causal attention: a pad changes no real position). The probe and the
    decoder pad alike, so the probe measures what decoding runs."""
    return tokens + tokens[-1:] * max(0, min_width - len(tokens))


def _decode_logits(llama: Any, tokens: list[int], n_past: int, min_width: int = 1) -> list[Any]:
    """Decode `tokens` after the first `n_past` cached ones in one batch (padded to `min_width`);
    each of their positions' logits."""
    import numpy as np
    from llama_cpp import llama_get_logits_ith

    llama._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llama._batch.set_batch(batch=_padded(tokens, min_width), n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    return [np.ctypeslib.as_array(llama_get_logits_ith(llama.ctx, i), shape=(llama.n_vocab(),)).copy()
            for i in range(len(tokens))]


class RepetitionStop:
    """A llama-cpp-python stopping criterion: the reply ends with `repeats` copies of one block of
    up to `MAX_BLOCK_UNITS` units (the pieces between newlines, commas and semicolons, numbers
    aside, as `agents.extract` reads a runaway) at least `RUNAWAY_LINE_CHARS` long, or with
    `RUNAWAY_REPEATS` copies of a shorter one (a listing such as "00:01", "00:02", ...). `reason`
    says what repeated once it stopped."""

    MAX_BLOCK_UNITS = 4

    def __init__(self, detokenize: Any, repeats: int) -> None:
        self.detokenize = detokenize
        self.repeats = repeats
        self.reason: str | None = None
        self._seen: int | None = None  # tokens already read; first call: the prompt plus one sampled token
        self._reply = b""

    def __call__(self, input_ids: Any, _logits: Any) -> bool:
        if self.reason is not None:
            return True
        if self._seen is None:
            self._seen = len(input_ids) - 1
        new = [int(t) for t in input_ids[self._seen:]]
        self._seen = len(input_ids)
        piece = self.detokenize(new)
        self._reply += piece
        if self.repeats <= 0 or not any(c in piece for c in b"\n,;"):
            return False
        self.reason = repeated_block(self._reply.decode("utf-8", errors="ignore"), self.repeats)
        return self.reason is not None


def repeated_block(text: str, repeats: int) -> str | None:
    """How `text` ends by repeating itself (see `RepetitionStop`), or None. The unit still being
    written (after the last separator) is left out."""
    units = [u for u in (repetition_shape(u) for u in _UNITS.split(text)[:-1]) if u]
    for size in range(1, RepetitionStop.MAX_BLOCK_UNITS + 1):
        block = units[-size:]
        chars = sum(len(u) for u in block)
        needed = repeats if chars >= RUNAWAY_LINE_CHARS else RUNAWAY_REPEATS
        if chars < 3 or len(units) < size * needed:
            continue
        if all(units[-(k + 1) * size: len(units) - k * size] == block for k in range(needed)):
            return f"it repeated `{' | '.join(block)[:60]}` {needed} times (numbers aside)"
    return None


def _role(message: BaseMessage) -> str:
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    return "user"


REPETITION_FINISH = "repetition"  # the finish_reason of a reply ended by `RepetitionStop`
_UNITS = re.compile(r"[\n,;]")


class LlamaCppChatModel(BaseChatModel):
    """Chat completion with a GGUF model file through llama-cpp-python."""

    model_path: Path
    model_name: str
    n_ctx: int = 8192
    n_threads: int = 2
    temperature: float = 0.2
    max_tokens: int = 1500
    seed: int = 0
    top_p: float = Field(0.95, gt=0, le=1)
    prompt_cache_bytes: int = Field(1 << 30, ge=0, description="saved prompt states of the model file (0: none)")
    prompt_lookup_tokens: int = Field(8, ge=0, le=64, description="most tokens drafted by prompt lookup per step, "
                                      "fewer where a batch would not evaluate exactly (0: off)")
    prompt_lookup_ngram: int = Field(3, ge=1, le=8, description="longest n-gram prompt lookup matches")
    repeat_stop: int = Field(8, ge=0, description="end a reply at this many copies of a long block (0: never)")

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "temperature": self.temperature, "max_tokens": self.max_tokens}

    def _complete(self, messages: list[BaseMessage], stop: list[str] | None, cancel: threading.Event,
                  on_tokens: TokenCallback | None = None, **kwargs: Any) -> ChatResult:
        loaded = _load(str(self.model_path), self.n_ctx, self.n_threads)
        llama = loaded.llama
        from llama_cpp import LogitsProcessorList, StoppingCriteriaList
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        eos = llama.token_eos()
        sampled = 0

        def stop_when_cancelled(_ids: Any, scores: Any) -> Any:
            nonlocal sampled
            if on_tokens is not None:  # called once per sampled token
                on_tokens(sampled)
                sampled += 1
            if cancel.is_set():  # force end-of-sequence: generation stops at the next token
                scores[:] = -float("inf")
                scores[eos] = 0.0
            return scores

        repeats = RepetitionStop(llama.detokenize, self.repeat_stop)
        with loaded.lock:
            if cancel.is_set():
                raise TimeoutError("cancelled before it started")
            decoding = loaded.decoding(self.prompt_lookup_tokens)
            draft = (LlamaPromptLookupDecoding(max_ngram_size=self.prompt_lookup_ngram,
                                               num_pred_tokens=decoding.drafts) if decoding.drafts else None)
            loaded.states.resize(self.prompt_cache_bytes)
            text, stops = _chat_format(llama, messages)
            prompt = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            held = loaded.states.restore(llama, prompt)
            if on_tokens is not None:  # reading the prompt takes minutes on a small CPU: say how much there is
                on_tokens(0, prompt_tokens=len(prompt) - held)
            llama.draft_model = draft  # per call: the instance is shared with other roles
            llama.min_width = decoding.min_width
            try:
                # the completion of the chat prompt, as create_chat_completion would run it (which takes
                # no stopping criteria): the same tokens, sampling defaults and stop strings
                response = llama.create_completion(
                    prompt=prompt, temperature=float(kwargs.get("temperature", self.temperature)),
                    top_p=self.top_p, max_tokens=int(kwargs.get("max_tokens", self.max_tokens)),
                    seed=int(kwargs.get("seed", self.seed)), stop=[*(stop or []), *stops],
                    logits_processor=LogitsProcessorList([stop_when_cancelled]),
                    stopping_criteria=StoppingCriteriaList([repeats]),
                )
            finally:
                llama.draft_model = None
                llama.min_width = 1
            loaded.states.save(llama)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        inp, out = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        metadata = {"model_name": self.model_name, "finish_reason": choice.get("finish_reason")}
        if repeats.reason is not None:
            metadata.update(finish_reason=REPETITION_FINISH, repetition=repeats.reason)
        message = AIMessage(
            content=choice.get("text") or "",
            usage_metadata={"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out},
            response_metadata=metadata,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return self._complete(messages, stop, threading.Event(), **kwargs)

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        cancel = threading.Event()
        listener = token_listener()
        on_tokens = None if listener is None else _on_loop(asyncio.get_running_loop(), listener)
        try:
            return await asyncio.to_thread(self._complete, messages, stop, cancel, on_tokens, **kwargs)
        except asyncio.CancelledError:
            cancel.set()  # the worker thread stops at the next token and releases the model
            raise


def _on_loop(loop: asyncio.AbstractEventLoop, callback: TokenCallback) -> TokenCallback:
    """`callback`, called from a worker thread but run on `loop`."""
    def report(count: int, prompt_tokens: int | None = None) -> None:
        try:
            loop.call_soon_threadsafe(callback, count, prompt_tokens)
        except RuntimeError:  # the loop has closed: a cancelled call runs on to its next token
            pass
    return report


def _common_prefix(held: Sequence[int], tokens: Sequence[int]) -> int:
    """How many leading `tokens` a cache holding `held` has (never the last one: its logits are
    needed, so it is always evaluated)."""
    cached = 0
    limit = min(len(held), len(tokens) - 1)
    while cached < limit and held[cached] == tokens[cached]:
        cached += 1
    return cached


def _cached_prefix(llama: Any, tokens: Sequence[int]) -> int:
    """How many leading `tokens` llama.cpp's cache already holds."""
    return _common_prefix(llama.input_ids[:llama.n_tokens], tokens)


def _logits_after(loaded: LoadedModel, tokens: list[int], model_name: str) -> Any:
    """Log-softmax of the next-token logits after `tokens`, evaluating only what llama.cpp's
    cache does not already hold (prompts that share a prefix share its evaluation)."""
    import numpy as np
    from llama_cpp import llama_get_logits_ith

    llama = loaded.llama
    if len(tokens) >= llama.n_ctx():
        raise ValueError(f"{model_name}: the prompt has {len(tokens)} tokens, more than the context "
                         f"window of {llama.n_ctx()} (ITEMSMITH_LOCAL_N_CTX)")
    with loaded.lock:
        cached = _cached_prefix(llama, tokens)
        llama.n_tokens = cached
        llama.eval(tokens[cached:])
        logits = np.array(np.ctypeslib.as_array(llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)),
                          dtype=np.float64)
    top = logits.max()
    return logits - (top + math.log(float(np.exp(logits - top).sum())))


class LlamaCppLetterScorer:
    """A `verification.students.LetterScorer` on a GGUF model: the log-probability of each option
    letter as the next token after a plain-text prompt, from one forward pass.

    It shares the loaded `Llama` (and its lock) with any chat model of the same file, so the two
    never interleave. A letter's score is the log of the probability mass of its single-token
    spellings ("A" and " A"): tokenizers differ in whether the space after "Answer:" is part of
    the letter's token. The longest prefix already in llama.cpp's cache is not evaluated again
    (student prompts share the instruction).
    """

    def __init__(self, model_path: Path, model_name: str, *, n_ctx: int = 8192, n_threads: int = 1) -> None:
        self.model_path = Path(model_path)
        self.model_name = model_name
        self.n_ctx = n_ctx
        self.n_threads = n_threads

    def count_tokens(self, prompt: str) -> int:
        llama = _load(str(self.model_path), self.n_ctx, self.n_threads).llama
        return len(llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False))

    def score_letters(self, prompt: str, letters: Sequence[str]) -> dict[str, float]:
        import numpy as np

        loaded = _load(str(self.model_path), self.n_ctx, self.n_threads)
        llama = loaded.llama
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=True, special=False)
        spellings = {letter: _single_tokens(llama, letter) for letter in letters}
        log_probs = _logits_after(loaded, tokens, self.model_name)
        return {letter: float(np.logaddexp.reduce(log_probs[ids])) for letter, ids in spellings.items() if ids}


class LlamaCppScoreReader:
    """A `verification.judges.ScoreReader` on a GGUF model: the judge prompt in the model's own
    chat template, the assistant turn opened with "Score:", and the probability of each score
    1..10 as the next tokens, from one forward pass (plus one token to tell 1 from 10 where the
    tokenizer spells 10 as "1" "0"). Judges of one model file share the loaded weights and
    llama.cpp's prompt cache, so the items part of the prompt (the same for every criterion) is
    evaluated once."""

    def __init__(self, model_path: Path, model_name: str, *, n_ctx: int = 8192, n_threads: int = 2) -> None:
        self.model_path = Path(model_path)
        self.model_name = model_name
        self.n_ctx = n_ctx
        self.n_threads = n_threads

    async def ascore_probabilities(self, messages: list[BaseMessage]) -> dict[int, float]:
        return await asyncio.to_thread(self.score_probabilities, messages)

    def score_probabilities(self, messages: list[BaseMessage]) -> dict[int, float]:
        import numpy as np

        loaded = _load(str(self.model_path), self.n_ctx, self.n_threads)
        llama = loaded.llama
        prompt = _chat_prompt(llama, messages) + "Score:"
        tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        log_probs = _logits_after(loaded, tokens, self.model_name)
        probabilities = {score: float(np.exp(np.logaddexp.reduce(log_probs[ids])))
                         for score in range(1, 11) if (ids := _single_tokens(llama, str(score)))}
        if 10 not in probabilities and 1 in probabilities:  # "10" is "1" then "0": split the mass of "1"
            one = max(_single_tokens(llama, "1"), key=lambda token: log_probs[token])
            after_one = _logits_after(loaded, [*tokens, one], self.model_name)
            zero = float(np.exp(np.logaddexp.reduce(after_one[_single_tokens(llama, "0")])))
            probabilities[10] = probabilities[1] * zero
            probabilities[1] *= 1 - zero
        return probabilities


def _chat_format(llama: Any, messages: list[BaseMessage]) -> tuple[str, list[str]]:
    """`messages` in the model's own chat template with the assistant turn opened (plain
    "role: text" lines when the model file has no template), and the template's stop strings."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    payload = [{"role": _role(m), "content": m.text} for m in messages]
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return "".join(f"{m['role']}: {m['content']}\n" for m in payload) + "assistant: ", []
    vocab = llama._model  # llama-cpp-python exposes token texts only here
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(template=template, eos_token=vocab.token_get_text(eos) if eos != -1 else "",
                                    bos_token=vocab.token_get_text(bos) if bos != -1 else "")
    result = formatter(messages=payload)
    stops = [] if result.stop is None else [result.stop] if isinstance(result.stop, str) else list(result.stop)
    return result.prompt, [s for s in stops if s]


def _chat_prompt(llama: Any, messages: list[BaseMessage]) -> str:
    """`messages` in the model's own chat template with the assistant turn opened."""
    return _chat_format(llama, messages)[0]


def _single_tokens(llama: Any, letter: str) -> list[int]:
    """Token ids that spell `letter` alone, with or without a leading space."""
    ids = set()
    for text in (letter, f" {letter}"):
        encoded = llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        if len(encoded) == 1:
            ids.add(encoded[0])
    return sorted(ids)
