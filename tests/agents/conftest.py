"""Fixtures of the agents tests: a tiny handler file, a shared sandbox pool, scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from itemsmith.agents.inference import ModelHandle
from itemsmith.agents.scripted import ScriptedChatModel
from itemsmith.sandbox import SandboxPool

HANDLER_SOURCE = '''
import numpy as np
import pandas as pd


class TinyHandler:
    name = "tiny"
    description = "Three hourly series of a water level (unit: m): record a rises, b falls, c is flat with noise."

    def records(self):
        return pd.DataFrame({"record_id": ["a", "b", "c"], "label": ["up", "down", "flat"]})

    def series(self, record_id):
        slope = {"a": 1.0, "b": -1.0, "c": 0.0}[record_id]
        t = np.arange(72)
        return pd.DataFrame({"level": slope * t + np.sin(t * 1.3) * 0.5},
                            index=pd.date_range("2024-01-01", periods=72, freq="h", name="time"))
'''

GOOD = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid)["level"].dropna()
        answer = round(float(values.max()), 1)
        wrong = [round(answer + d, 1) for d in (-6.0, -3.0, 3.0)]
        items.append(mc_item(f"What is the highest water level (m) of record {rid}?", answer, wrong,
                             series=[series(values.to_numpy(), name="level", unit="m")],
                             rationale=f"max of the level column is {answer}", metadata={"record_ids": [rid]}))
    return items
'''

BAD_RANDINT = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    rid = ids[rng.randint(3)]
    return []
'''

BAD_COLUMN = GOOD.replace('["level"]', '["height"]')


def fenced(code: str, prose: str = "Here is the template:") -> str:
    return f"{prose}\n```python\n{code}```\n"


def plan_reply(titles: list[str]) -> str:
    return json.dumps([{"title": t, "category": "arithmetic", "concept": "arithmetic", "kind": "mc",
                        "question": f"{t}: what is asked about <record>?", "answer_from": "max of level",
                        "columns": ["level"]} for t in titles])


def scripted(source: Any, *, name: str = "scripted", timeout_s: float = 10.0) -> ModelHandle:
    return ModelHandle(ScriptedChatModel.from_source(source), "scripted", name, timeout_s)


@pytest.fixture(scope="session")
def handler_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("agents_handler") / "tiny_handler.py"
    path.write_text(HANDLER_SOURCE)
    return path


@pytest.fixture(scope="session")
def pool(handler_file: Path) -> Iterator[SandboxPool]:
    with SandboxPool(str(handler_file), workers=2) as p:
        yield p


@pytest.fixture(autouse=True)
def _no_real_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see real provider keys or a configured generator, and retries back off fast."""
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ITEMSMITH_OPENAI_API_KEY", "ITEMSMITH_ANTHROPIC_API_KEY",
                "ITEMSMITH_GENERATOR", "ITEMSMITH_PLANNER", "ITEMSMITH_CHECKPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ITEMSMITH_BACKOFF_INITIAL_S", "0.01")
    monkeypatch.setenv("ITEMSMITH_BACKOFF_MAX_S", "0.05")
