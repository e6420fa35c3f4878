"""Integration: the llama.cpp letter scorer of log-likelihood students, on the smallest local model.

Marked `local_model`; skipped where no local model is installed (CI installs `local-tiny`).
"""

from __future__ import annotations

import math

import pytest

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.providers.local import make_letter_scorer
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings

from .test_local import _model_name

pytestmark = pytest.mark.local_model

PROMPT = ("Question: 2 + 2 = ?\nA) 3\nB) 4\nC) 5\nD) 22\n\nEnd with 'Answer: X', X being one of A, B, C, D.\n\n"
          "Answer:")


def test_letter_scores_are_log_probabilities_and_the_cache_does_not_change_them(tmp_path) -> None:
    scorer = make_letter_scorer(ModelSpec.parse(f"local:{_model_name()}"), AgentSettings(model_cache_dir=tmp_path))
    first = scorer.score_letters(PROMPT, ["A", "B", "C", "D"])
    assert set(first) == {"A", "B", "C", "D"}
    assert all(math.isfinite(v) and v < 0 for v in first.values())
    assert sum(math.exp(v) for v in first.values()) <= 1.0 + 1e-6
    other = scorer.score_letters(PROMPT.replace("2 + 2", "3 + 1"), ["A", "B", "C", "D"])  # shares a prefix
    again = scorer.score_letters(PROMPT, ["A", "B", "C", "D"])
    assert other != first and again == pytest.approx(first, abs=1e-4)
    assert scorer.count_tokens(PROMPT) > 10


def test_letter_scorer_needs_a_local_model() -> None:
    with pytest.raises(ProviderConfigError, match="need a local model"):
        make_letter_scorer(ModelSpec.parse("openai:gpt-4o"), AgentSettings())
