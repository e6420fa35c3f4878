"""Calibration and adaptive evaluation through the command line only, with scripted models of
known strength: bank -> release -> `release evaluate` six models (answers stored) -> `release
calibrate` (the mis-keyed template is listed for review, respondents in order of strength) ->
`release evaluate --adaptive` (fewer items than the release; the stronger model gets the higher
ability) -> a failing model leaves a resumable evaluation."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from itemsmith.cli.app import app
from itemsmith.items.hashing import item_hash
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import Item
from itemsmith.templates_bank.evaluation import fresh_seeds, release_items
from itemsmith.templates_bank.regeneration import TemplateRun, regenerate
from itemsmith.templates_bank.releases import get_release
from itemsmith.templates_bank.storage import list_evaluation_responses, open_session

TEMPLATES = ["exam_trend_direction", "exam_granger_direction", "feat_seasonality_classify",
             "tsaqa_puzzle_trend_season", "exam_pure_noise_tf"]
MIS_KEYED = "exam_pure_noise_tf"
DIFFICULTY = {"exam_trend_direction": -1.0, "exam_granger_direction": 0.0, "feat_seasonality_classify": 0.5,
              "tsaqa_puzzle_trend_season": 1.0}
STRENGTHS = [-2.0, -1.2, -0.4, 0.4, 1.2, 2.0]
ADAPTIVE_SEED, ADAPTIVE_ITEMS = 3, 12


def p_correct(strength: float, template: str) -> float:
    slope = -2.5 if template == MIS_KEYED else 2.5  # strong models fail the mis-keyed template
    return 1 / (1 + np.exp(-slope * (strength - DIFFICULTY.get(template, 0.0))))


def script(path: Path, name: str, strength: float, items: dict[str, list[Item]]) -> str:
    """A scripted model of known strength: one rule per item (a fixed draw decides right or wrong)."""
    rules = []
    for template, template_items in items.items():
        for item in template_items:
            draw = int.from_bytes(hashlib.sha256(f"{name}:{item_hash(item)}".encode()).digest()[:8], "big") / 2**64
            letter = item.answer_index if draw < p_correct(strength, template) else (item.answer_index + 1) % len(item.options)
            rules.append({"match": re.escape(render_item(item, TextFormat.plain)), "replies": [f"Answer: {chr(65 + letter)}"]})
    path.write_text(json.dumps({"rules": rules, "replies": ["I cannot tell."]}))
    return f"scripted:{path}"


@pytest.mark.slow
def test_scripted_models_evaluate_calibrate_and_evaluate_adaptively_from_the_command_line(
        engine, database_url: str, tmp_path: Path) -> None:
    runner = CliRunner(env={"COLUMNS": "400"})

    def run(*args: str, code: int = 0) -> str:
        result = runner.invoke(app, [*args, "--db", database_url])
        assert result.exit_code == code, result.output
        return result.stdout

    run("bank", "create", "flow", "--handler", "synthetic", "--owner", "tests")
    run("bank", "import-curated", "flow", "--reviewer", "tests", *[a for t in TEMPLATES for a in ("-t", t)])
    run("release", "create", "flow", "--by", "tests", "--seeds", "2", "-n", "4")
    with open_session(database_url) as session:
        release = get_release(session, "flow", 1)
    items: dict[str, list[Item]] = {}
    for run_items in release_items(release).runs:
        items.setdefault(run_items.template.template_id, []).extend(run_items.items)
    seeds = fresh_seeds({0, 1}, ADAPTIVE_ITEMS, ADAPTIVE_SEED)
    for fresh in regenerate([TemplateRun(t.template_id, release.sources[t.version], release.local_handler(t),
                                         tuple(seeds), t.num_samples) for t in release.manifest.templates]):
        items[fresh.run.template_id].extend(fresh.items)
    models = [script(tmp_path / f"model{k}.json", f"model{k}", s, items) for k, s in enumerate(STRENGTHS)]

    evaluations = [json.loads(run("release", "evaluate", "flow@1", "--model", m, "--json")) for m in models]
    assert all(e["overall"]["n"] == 40 and e["evaluation_id"] for e in evaluations)

    calibration = json.loads(run("release", "calibrate", "flow@1", "--json"))
    assert calibration["needs_review"] == [MIS_KEYED]
    ability = {r["respondent"]: r["ability"] for r in calibration["respondents"]}
    assert ability[models[-1]] > ability[models[0]]  # named by their model spec, as the evaluations stored them
    assert f"to review (negative or near-zero discrimination, likely mis-keyed): {MIS_KEYED}" in run(
        "release", "calibrate", "flow@1")

    adaptive = {k: json.loads(run("release", "evaluate", "flow@1", "--model", models[k], "--adaptive",
                                  "--target-se", "0.6", "--max-items", str(ADAPTIVE_ITEMS), "--seed",
                                  str(ADAPTIVE_SEED), "--json")) for k in (0, len(models) - 1)}
    strong, weak = adaptive[len(models) - 1], adaptive[0]
    assert strong["theta"] > weak["theta"]
    assert all(a["items_used"] < 40 and a["templates_without_irt"] == [] for a in adaptive.values())

    # a model that fails on its first call: no report, the evaluation id to resume with
    failing = tmp_path / "failing.json"
    failing.write_text(json.dumps({"replies": [{"error": 400}]}))
    result = runner.invoke(app, ["release", "evaluate", "flow@1", "--model", f"scripted:{failing}",
                                 "--db", database_url])
    assert result.exit_code == 1 and "resume with --resume eval-" in result.output
    assert "overall accuracy" not in result.output
    evaluation_id = re.search(r"--resume (eval-[0-9a-f]+)", result.output).group(1)
    with open_session(database_url) as session:
        assert list_evaluation_responses(session, evaluation_id=evaluation_id) == []
