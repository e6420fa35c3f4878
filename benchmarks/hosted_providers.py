"""The hosted-provider scenarios (tests/agents/llm/hosted_scenarios.py) against the local fakes of the
OpenAI and Anthropic APIs and the emulated vLLM and Ollama servers (no key, no network): for each,
the calls sent, the HTTP errors, the calls answered / cut / failed, what was stored, and
itemsmith's metered cost against the fake's own bill.

    python benchmarks/hosted_providers.py            # the 429 window is 20 s
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.agents.llm import hosted_scenarios as scenarios


def main() -> None:
    runs = {
        "reasoning budget (gpt-5-mini, gpt-5-nano students, 6 items)": scenarios.reasoning_budget(6),
        "reasoning budget, old settings (reply cap only, default effort)": scenarios.reasoning_budget(
            6, reasoning_budget_tokens=0, effort=None),
        "temperature rules (o1, o3, o4-mini, claude-opus-4-7, claude-sonnet-4-5 judges)": scenarios.temperature_rules(3),
        "429 with a 20 s window (Retry-After), default wait bound": scenarios.rate_limit_window(20.0),
        "429 with a 20 s window, wait bound 5 s": scenarios.rate_limit_window(20.0, max_wait_s=5),
        "cached prompts (claude-sonnet-4-5, gpt-5-mini judges, 3 runs of one template)": scenarios.cached_prompts(3),
        "reply cap 64 on emulated vLLM and Ollama (openai_compatible students, 3 items)": scenarios.compatible_cap(64),
        "reply cap 8 on emulated vLLM and Ollama (replies need 12 tokens)": scenarios.compatible_cap(8),
    }
    for name, measured in runs.items():
        print(f"{name}\n  {json.dumps(measured)}")


if __name__ == "__main__":
    main()
