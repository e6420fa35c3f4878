"""Integration: single-pass local judges (the llama.cpp score reader) on the smallest local model.

Marked `local_model`; skipped where no local model is installed (CI installs `local-tiny`).
"""

from __future__ import annotations

import pytest

from itemsmith.agents.errors import ProviderConfigError
from itemsmith.agents.llm.factory import CallLog, build_judges, retry_policy
from itemsmith.agents.llm.providers.local import make_score_reader
from itemsmith.agents.llm.spec import ModelSpec
from itemsmith.agents.settings import AgentSettings
from itemsmith.items.schema import Item
from itemsmith.verification.judges import PanelConfig, judge_prompt, judge_template
from itemsmith.verification.samples import TemplateSample

from .test_local import _model_name

pytestmark = pytest.mark.local_model


def _sample() -> TemplateSample:
    items = [Item(question=f"Is the last value of series {i} above its first?", options=["yes", "no"],
                  answer_index=0, kind="tf", rationale="compare the last value with the first",
                  series=[{"name": "level", "values": [float(v + i) for v in range(30)], "unit": "m"}])
             for i in range(3)]
    return TemplateSample(template_id="t", items=items, task="trend questions", dataset="hourly river levels")


def test_local_judge_reads_a_score_distribution_in_one_pass_and_the_cache_does_not_change_it(tmp_path) -> None:
    settings = AgentSettings(model_cache_dir=tmp_path)
    reader = make_score_reader(ModelSpec.parse(f"local:{_model_name()}"), settings)
    messages = judge_prompt(_sample(), "solvability", PanelConfig(), "score_first")
    first = reader.score_probabilities(messages)
    assert set(first) == set(range(1, 11))  # 10 is told apart from 1 even where "10" is two tokens
    assert all(p >= 0 for p in first.values()) and 0 < sum(first.values()) <= 1 + 1e-6
    other = reader.score_probabilities(judge_prompt(_sample(), "relevance", PanelConfig(), "score_first"))
    again = reader.score_probabilities(messages)
    assert other != first and again == pytest.approx(first, abs=1e-4)


def test_local_judges_are_built_score_first_and_judge_a_template(tmp_path) -> None:
    settings = AgentSettings(model_cache_dir=tmp_path)
    [judge] = build_judges([ModelSpec.parse(f"local:{_model_name()}")], settings=settings)
    assert judge.config.form == "score_first" and judge.config.name == f"local:{_model_name()}"
    log = CallLog()
    result = judge_template(_sample(), [judge.bind(log, retry_policy(settings))], PanelConfig(items_per_prompt=2))
    assert len(result.scores) == 5 and not log.errors
    assert all(s.method == "score_first" and 1 <= s.score <= 10 and s.attempts == 1 for s in result.scores)
    assert log.ledger.totals().calls == 5


def test_score_reader_needs_a_local_model() -> None:
    with pytest.raises(ProviderConfigError, match="single-pass scores need a local model"):
        make_score_reader(ModelSpec.parse("openai:gpt-4o"), AgentSettings())
