"""Benchmark: how fast the installed llama.cpp build reads a prompt and decodes, per local model.

The default pipeline reads far more than it writes (students and judges read items in one pass),
so the prompt-reading rate of the build sets most of a run's time. Each model is loaded as the
chat models load it (`llamacpp._load`: flash attention, the settings' threads) and reads a
1,200-token prompt (timed after a warm-up), then decodes 64 tokens one step at a time. The
build's instruction sets come from llama.cpp's own system info. Compare two builds by putting one
first on the path (a wheel built with other CMAKE_ARGS, installed with `pip install --target`)::

    python benchmarks/llama_build_speed.py
    PYTHONPATH=/tmp/llama-avx512 python benchmarks/llama_build_speed.py

Needs the `local` extra (or `local-tiny` with --models smollm2-135m).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import llama_cpp

from itemsmith.agents.llm.providers import llamacpp
from itemsmith.agents.llm.providers.local import model_path
from itemsmith.agents.settings import get_settings

PROMPT = (Path(llamacpp.__file__).parent / "prompts.py").read_text()


def _rates(name: str, prompt_tokens: int, decode_tokens: int) -> dict[str, float]:
    settings = get_settings()
    llama = llamacpp._load(str(model_path(name, settings.model_cache_dir)), settings.local_n_ctx,
                           settings.local_n_threads).llama
    tokens = llama.tokenize(PROMPT.encode())[:prompt_tokens]
    llama.reset()
    llama.eval(tokens[:64])  # warm-up
    llama.reset()
    started = time.perf_counter()
    llama.eval(tokens)
    read = len(tokens) / (time.perf_counter() - started)
    step = llama.tokenize(b" x", add_bos=False)[0]
    started = time.perf_counter()
    for _ in range(decode_tokens):
        llama.eval([step])
    return {"prompt_tokens_per_s": round(read, 1),
            "decode_tokens_per_s": round(decode_tokens / (time.perf_counter() - started), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--prompt-tokens", type=int, default=1200)
    parser.add_argument("--decode-tokens", type=int, default=64)
    args = parser.parse_args()
    result = {"build": llama_cpp.llama_print_system_info().decode().strip(), "llama_cpp": llama_cpp.__file__,
              "threads": get_settings().local_n_threads, "load": os.getloadavg()[0],
              "models": {name: _rates(name, args.prompt_tokens, args.decode_tokens) for name in args.models}}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
