"""One release evaluated three ways against the same local model behind ``llama_cpp.server``.

    python benchmarks/three_way_eval.py [--model smollm2-135m] [--templates 16] [--max-tokens 48]
                                        [--threads 2] [--port 8765] [--loglik] [--loglik-items 2]
                                        [--keep DIR] [--out FILE]

1. A SQLite bank holding the ``--templates`` curated templates with the shortest prompts (`SHORT`:
   a CPU run takes minutes, not hours), released with one item each and exported as ``lm-eval``
   and ``inspect``.
2. The local model (`agents.llm.providers.local.model_path`: ``smollm2-135m`` from the
   ``local-tiny`` extra, ``qwen2.5-coder-0.5b`` from ``local-small``) served by ``nice -n 10
   python -m llama_cpp.server`` on loopback (OpenAI-compatible ``/v1/chat/completions`` and
   ``/v1/completions``).
3. The same release scored by ``itemsmith release evaluate -m openai_compatible:MODEL@URL`` (chat,
   itemsmith's prompt), ``lm_eval --model local-chat-completions`` on the ``_gen`` task, and
   ``inspect eval task.py --model openai-api/llamacpp/MODEL`` (Inspect's ``openai/`` provider calls
   ``/v1/responses``, which llama.cpp does not serve). All three read the reply with itemsmith's
   answer rule and cap it at ``--max-tokens``; greedy decoding. ``--loglik`` adds ``lm_eval --model
   local-completions`` on the ``multiple_choice`` task for the first ``--loglik-items`` items, with
   a tokenizer read from the GGUF file (needs the ``gguf`` package): it shows that this server's
   echoed log-probabilities leave every option at 0 (docs/releases.md); it is slow, as the server
   sorts the whole vocabulary in Python for every prompt token of every option.

Prints one JSON object: each way's accuracy, its binomial standard error sqrt(p(1-p)/n), its
difference from ``release evaluate`` in those standard errors (unpaired, so conservative), the share
of items keyed A (what always answering A scores), and each item's reply and choice per way (where
the three disagree, read them). Each tool keeps its prompt (itemsmith's system and "End with
'Answer: X'"; lm-eval's instruction; Inspect's multiple-choice template), so a model may answer
them differently; the scoring is the same.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from itemsmith.agents.llm.providers.local import model_path
from itemsmith.agents.settings import AgentSettings

BIN = Path(sys.executable).parent
# The curated templates whose items have the shortest prompts (under 2,700 characters), shortest first.
SHORT = ("italy_power_peak_hour", "stocks_close_on_date", "weather_identify_month", "italy_power_season_tf",
         "tsaqa_next_segment_tf", "weather_rainy_days_count", "stocks_highest_close_date",
         "weather_largest_temp_range_day", "stocks_largest_daily_move", "tsaqa_puzzle_trend_season",
         "italy_power_odd_season", "stocks_period_gain_tf", "weather_wettest_month", "tsaqa_earliest_segment",
         "tsaqa_puzzle_smooth_walk", "feat_describe_cross_family", "feat_extreme_date")


def _run(command: list[str], env: dict[str, str], cwd: Path | None = None) -> float:
    started = time.monotonic()
    done = subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-4000:]}")
    return round(time.monotonic() - started, 1)


def build_release(folder: Path, env: dict[str, str], templates: int) -> str:
    itemsmith = str(BIN / "itemsmith")
    chosen = [arg for t in SHORT[:templates] for arg in ("-t", t)]
    _run([itemsmith, "bank", "create", "curated", "--handler", "synthetic", "--owner", "bench"], env)
    _run([itemsmith, "bank", "import-curated", "curated", "--reviewer", "bench", *chosen], env)
    _run([itemsmith, "release", "create", "curated", "--by", "bench", "-n", "1", *chosen], env)
    for fmt in ("lm-eval", "inspect"):
        _run([itemsmith, "release", "export", "curated@1", "-f", fmt, "-o", str(folder / fmt)], env)
    return "curated@1"


def start_server(gguf: Path, alias: str, port: int, threads: int, log: Path) -> subprocess.Popen[bytes]:
    command = ["nice", "-n", "10", sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
               "--model_alias", alias, "--n_threads", str(threads), "--n_ctx", "4096", "--logits_all", "true",
               "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited ({server.returncode}); see {log}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
            return server
        except OSError:
            time.sleep(1)
    server.terminate()
    raise SystemExit(f"llama_cpp.server did not answer in 120 s; see {log}")


def _way(correct: list[bool], seconds: float, items: dict[str, dict[str, Any]]) -> dict[str, Any]:
    n = len(correct)
    p = sum(correct) / n
    return {"n": n, "accuracy": round(p, 4), "se": round(math.sqrt(p * (1 - p) / n), 4), "s": seconds,
            "items": items}


def itemsmith_way(folder: Path, env: dict[str, str], ref: str, alias: str, url: str) -> dict[str, Any]:
    out = folder / "itemsmith.json"
    seconds = _run([str(BIN / "itemsmith"), "release", "evaluate", ref, "-m", f"openai_compatible:{alias}@{url}",
                    "--concurrency", "1", "--out-file", str(out)], env)
    report = json.loads(out.read_text())
    items = {f"{r['template_id']}-{r['seed']}-{r['item_index']}": {"choice": r["choice"], "correct": r["correct"],
                                                                   "reply": r["raw"]} for r in report["responses"]}
    return _way([r["correct"] for r in report["responses"]], seconds, items)


def _lm_eval_samples(output: Path) -> list[dict[str, Any]]:
    files = sorted(output.rglob("samples_*.jsonl"))
    assert files, f"lm_eval wrote no samples under {output}"
    return [json.loads(line) for line in files[-1].read_text().splitlines() if line.strip()]


def lm_eval_way(folder: Path, env: dict[str, str], task: str, model: str, model_args: str,
                extra: list[str]) -> dict[str, Any]:
    output = folder / f"lm-eval-{model}"
    seconds = _run([str(BIN / "lm_eval"), "--model", model, "--model_args", model_args, "--include_path",
                    str(folder / "lm-eval"), "--tasks", task, "--batch_size", "1", "--output_path", str(output),
                    "--log_samples", *extra], env)
    items = {}
    for sample in _lm_eval_samples(output):
        doc = sample["doc"]
        replies = sample["filtered_resps"]
        items[doc["id"]] = {"correct": bool(sample["acc"]),
                            "reply": replies[0] if isinstance(replies[0], str) else [r[0] for r in replies]}
    return _way([item["correct"] for item in items.values()], seconds, items)


def inspect_way(folder: Path, env: dict[str, str], alias: str, url: str, max_tokens: int) -> dict[str, Any]:
    logs = folder / "inspect-logs"
    seconds = _run([str(BIN / "inspect"), "eval", "task.py", "--model", f"openai-api/llamacpp/{alias}",
                    "--max-tokens", str(max_tokens), "--temperature", "0", "--max-connections", "1",
                    "--log-dir", str(logs), "--log-format", "json", "--no-log-images"],
                   {**env, "LLAMACPP_BASE_URL": url, "LLAMACPP_API_KEY": "not-needed"}, cwd=folder / "inspect")
    log = json.loads(sorted(logs.glob("*.json"))[-1].read_text())
    items = {}
    for sample in log["samples"]:
        score = next(iter(sample["scores"].values()))
        items[str(sample["id"])] = {"choice": score.get("answer"), "correct": score["value"] == "C",
                                    "reply": sample["output"]["choices"][0]["message"]["content"]}
    return _way([item["correct"] for item in items.values()], seconds, items)


def hf_tokenizer(gguf: Path, folder: Path) -> Path:
    """A Hugging Face tokenizer folder read from the GGUF file, for lm-eval's token-level requests."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.save_pretrained(folder)
    return folder


def compare(ways: dict[str, dict[str, Any]]) -> dict[str, Any]:
    base = ways["itemsmith"]
    table = {}
    for name, way in ways.items():
        table[name] = {k: way[k] for k in ("n", "accuracy", "se", "s")}
        if name != "itemsmith":
            se = math.hypot(base["se"], way["se"]) or 1.0 / base["n"]
            table[name]["diff_in_se"] = round((way["accuracy"] - base["accuracy"]) / se, 2)
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m", help="a local model of itemsmith's catalog")
    parser.add_argument("--templates", type=int, default=16, choices=range(1, len(SHORT) + 1), metavar="N")
    parser.add_argument("--max-tokens", type=int, default=48, help="reply cap in every way")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--loglik", action="store_true", help="also lm-eval's multiple_choice task (log-likelihood)")
    parser.add_argument("--loglik-items", type=int, default=2, help="items of the log-likelihood task (lm-eval --limit)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    folder = args.keep or Path(tempfile.mkdtemp(prefix="three-way-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "ITEMSMITH_DATA_DIR": str(folder / "data"), "ITEMSMITH_MAX_OUTPUT_TOKENS": str(args.max_tokens),
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    env.pop("ITEMSMITH_DATABASE_URL", None)
    gguf = model_path(args.model, AgentSettings().model_cache_dir)
    ref = build_release(folder, env, args.templates)
    task = json.loads((folder / "lm-eval" / "export.json").read_text())
    name = next(p.stem for p in (folder / "lm-eval").glob("*_gen.yaml")).removesuffix("_gen")
    url = f"http://127.0.0.1:{args.port}/v1"
    load = os.getloadavg()
    server = start_server(gguf, args.model, args.port, args.threads, folder / "server.log")
    try:
        ways = {"itemsmith": itemsmith_way(folder, env, ref, args.model, url)}
        ways["lm_eval_chat"] = lm_eval_way(
            folder, env, f"{name}_gen", "local-chat-completions",
            f"model={args.model},base_url={url}/chat/completions,num_concurrent=1,max_retries=2",
            ["--apply_chat_template", "--gen_kwargs", f"max_gen_toks={args.max_tokens}"])
        ways["inspect"] = inspect_way(folder, env, args.model, url, args.max_tokens)
        if args.loglik:
            tokenizer = hf_tokenizer(gguf, folder / "tokenizer")
            ways["lm_eval_loglik"] = lm_eval_way(
                folder, env, name, "local-completions",
                f"model={args.model},base_url={url}/completions,num_concurrent=1,max_retries=2,"
                f"tokenizer_backend=huggingface,tokenizer={tokenizer},tokenized_requests=False",
                ["--limit", str(args.loglik_items)])
    finally:
        server.terminate()  # uvicorn finishes the request in flight first, which may take minutes
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    keys = [json.loads(line)["target"] for line in (folder / "inspect" / "data.jsonl").read_text().splitlines()]
    result = {"model": args.model, "release": task["release"], "max_tokens": args.max_tokens,
              "keyed_first": round(keys.count("A") / len(keys), 4),  # what a tool that always picks A scores
              "load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in os.getloadavg()],
              "summary": compare(ways), "ways": ways}
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.keep is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
