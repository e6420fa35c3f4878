"""Fixtures of the agents tests: a tiny handler file, a shared sandbox pool, scripted models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from itemsmith.agents.authoring.taxonomy import coverage_plan
from itemsmith.agents.llm.inference import ModelHandle
from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.sandbox import SandboxPool

HANDLER_SOURCE = '''
import numpy as np
import pandas as pd

SLOPES = {"up": 0.5, "down": -0.5, "flat": 0.0}


class TinyHandler:
    name = "tiny"
    description = ("Forty hourly series of a water level (unit: m), three days each: records labelled up rise, "
                   "down fall, flat stay level; all with noise.")

    def records(self):
        labels = [("up", "down", "flat")[i % 3] for i in range(40)]
        return pd.DataFrame({"record_id": [f"r{i:02d}" for i in range(40)], "label": labels})

    def series(self, record_id):
        i = int(record_id[1:])
        noise = np.random.default_rng(i).normal(0.0, 0.4, 72)
        t = np.arange(72)
        level = 5.0 + i * 0.37 + SLOPES[("up", "down", "flat")[i % 3]] * t + np.sin(t * 1.3) * 0.5 + noise
        return pd.DataFrame({"level": level},
                            index=pd.date_range("2024-01-01", periods=72, freq="h", name="time"))
'''

# Passes the structure check and the item audit: the mean of a random window of a random record
# (few repeats), the options built with numeric_options (key at a random rank, all rounded alike).
GOOD = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    tries = 0
    while len(items) < num_samples and tries < 50 * num_samples:
        tries += 1
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid)["level"].dropna().to_numpy(dtype=float)
        start = int(rng.integers(0, 48))
        end = start + int(rng.integers(12, 25))
        window = values[start:end]
        key, wrong = numeric_options(float(window.mean()), spread=float(rng.uniform(0.3, 1.0)), decimals=2)
        items.append(mc_item(f"What is the mean water level (m) of record {rid} between hours {start} and "
                             f"{end - 1}?", key, wrong, series=[series(window, name="level", unit="m")],
                             rationale=f"the mean of the level column in the window is {key}",
                             metadata={"record_ids": [rid]}))
    return items
'''

# The same question in other words: another template that passes both (a median would not pass
# the audit: medians of odd windows are data values, which recur as keys across seeds).
AVERAGE = GOOD.replace("mean water level", "average water level").replace("the mean of", "the average of")

# Passes the structure check but not the item audit: fixed offsets put the key always second smallest.
SHORTCUT = '''def question(num_samples):
    ids = handler.records()["record_id"].tolist()
    items = []
    for _ in range(num_samples):
        rid = ids[int(rng.integers(len(ids)))]
        values = handler.series(rid)["level"].dropna().to_numpy(dtype=float)
        start = int(rng.integers(0, 48))
        window = values[start:start + 12]
        answer = round(float(window.max()), 1)
        wrong = [round(answer + d, 1) for d in (-3, 3, 6)]
        items.append(mc_item(f"What is the highest water level (m) of record {rid} from hour {start}?", answer,
                             wrong, series=[series(window, name="level", unit="m")]))
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
    """A scripted planner's briefs, one per title, each of the category its slot asks for on the
    one-channel handler for a task that names no category (`coverage_plan`), as a planner that
    follows the plan writes them."""
    categories = coverage_plan(len(titles), multichannel=False)
    return json.dumps([{"title": t, "category": c, "concept": "arithmetic", "kind": "mc",
                        "question": f"{t}: what is asked about <record>?", "answer_from": "max of level",
                        "columns": ["level"]} for t, c in zip(titles, categories, strict=True)])


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
