"""Plain `itemsmith author` (no bank) measures the accepted templates' diversity in the run
report: report.json's summary and its ``diversity`` field, over the items the content stages saw,
with the embedder named: off, or unavailable (no ``diversity`` extra): text similarity only."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from itemsmith.agents.authoring.models import RunReport
from itemsmith.cli.app import app
from itemsmith.templates_bank import diversity

from ..conftest import GOOD, fenced, plan_reply


def _no_embedding_model(texts: Sequence[str]) -> np.ndarray:
    raise ImportError("the embedding model needs the 'diversity' extra")


@pytest.mark.parametrize(("setting", "named"), [("off", "off (ITEMSMITH_DIVERSITY_EMBEDDER=off)"),
                                                ("minilm", "none (the embedding model needs the 'diversity' extra)")])
def test_scripted_author_report_carries_diversity_without_a_bank(setting: str, named: str, handler_file: Path,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ITEMSMITH_DIVERSITY_EMBEDDER", setting)
    monkeypatch.setattr(diversity, "minilm_embedder", _no_embedding_model)
    gen = tmp_path / "gen.yaml"
    gen.write_text(json.dumps({"replies": [fenced(GOOD)]}))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([plan_reply(["Highest level", "Peak level"])]))
    result = CliRunner().invoke(app, [
        "author", "--handler", str(handler_file), "--task", "water levels", "--templates", "2", "--generator",
        f"scripted:{gen}", "--planner", f"scripted:{plan}", "--out", str(tmp_path / "out"), "--run-id", "div",
        "--seed", "3", "--no-live"])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "out" / "div" / "report.json").read_text())
    summary = written["summary"]["diversity"]
    assert summary == written["diversity"] and summary["templates"] == 2
    assert summary["embedder"] == f"{named}: text similarity only"
    assert summary["report"]["embedding_distance_mean"] is None and isinstance(summary["near_duplicates"], list)
    report = RunReport.model_validate(written)
    reviewed = [item for slot in report.accepted for result in slot.attempts[-1].verification
                for item in result.review_items]
    assert len(report.accepted) == 2 and summary["report"]["n_texts"] == len(reviewed) > 2
    assert 0.0 < summary["report"]["levenshtein_mean"] < 1.0
