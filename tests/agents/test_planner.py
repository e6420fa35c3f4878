"""The planner: lenient parsing, de-duplication, coverage, fallback briefs."""

from __future__ import annotations

import asyncio
import json

import pytest

from itemsmith.agents.errors import PlanningError
from itemsmith.agents.inference import RetryPolicy
from itemsmith.agents.planner import fallback_briefs, json_objects, parse_briefs, plan_briefs
from itemsmith.agents.taxonomy import coverage_plan

from .conftest import scripted
from .test_extract_feedback import PROFILE

FAST = RetryPolicy(max_retries=0, initial_s=0, max_s=0)


def brief(title: str, category: str = "arithmetic", **extra: object) -> dict[str, object]:
    return {"title": title, "category": category, "concept": "trend", "kind": "mc",
            "question": f"What about {title}?", "answer_from": "max of level", "columns": ["level", "nonsense"],
            **extra}


def test_json_objects_found_in_prose_and_fences() -> None:
    text = 'Plan:\n```json\n[{"a": 1}, {"b": {"c": 2}}]\n```\nAlso {"d": 3} and {broken'
    assert json_objects(text) == [{"a": 1}, {"b": {"c": 2}}, {"d": 3}]


def test_parse_keeps_valid_briefs_and_reports_invalid_ones() -> None:
    text = json.dumps([brief("Peak"), {"title": "x"}, brief("Drop", category="temp_relation", kind="True/False")])
    briefs, errors = parse_briefs(text, PROFILE, ["arithmetic", "retrieval", "anomaly_detection"])
    assert [b.title for b in briefs] == ["Peak", "Drop"]
    assert briefs[0].columns == ["level"]  # unknown columns dropped
    assert briefs[1].category == "temporal_relation" and briefs[1].kind == "tf"  # near miss corrected
    assert len(errors) == 1 and "object 2" in errors[0]


def test_coverage_plan_spreads_categories() -> None:
    plan = coverage_plan(10)
    assert len(set(plan)) == 10
    assert "causality" not in coverage_plan(10, multichannel=False)


def test_scripted_planner_dedupes_follows_up_and_falls_back() -> None:
    first = json.dumps([brief("Peak"), brief("Peak"), brief("Low")])
    follow_up = json.dumps([brief("Low"), "nothing"])
    handle = scripted([first, follow_up])
    briefs, info = asyncio.run(plan_briefs(handle, profile=PROFILE, task="levels", n=4, retry=FAST))
    assert [b.title for b in briefs[:2]] == ["Peak", "Low"] and len(briefs) == 4
    assert info.from_planner == 2 and info.fallback == 2 and info.usage.calls == 2
    assert all(b.origin == "fallback" for b in briefs[2:]) and len({b.title for b in briefs}) == 4
    assert "2 question type(s) are still missing" in handle.model.prompts[1]


def test_scripted_planner_without_fallback_raises() -> None:
    with pytest.raises(PlanningError, match="usable"):
        asyncio.run(plan_briefs(scripted(["no json at all"]), profile=PROFILE, task="t", n=2, retry=FAST,
                                allow_fallback=False))


def test_fallback_briefs_use_real_columns() -> None:
    briefs = fallback_briefs(PROFILE, coverage_plan(10))
    assert len(briefs) == 10 and all("level" in b.columns or "label" in b.columns for b in briefs)


def test_titles_copied_from_category_descriptions_are_replaced() -> None:
    text = json.dumps([brief("Anomaly detection: find or detect a spike, drop, outlier, unusual window or labelled "
                             "anomaly", question="Which day has the largest spike in level?"),
                       brief("arithmetic: Count of high readings")])
    briefs, _ = parse_briefs(text, PROFILE, ["anomaly_detection", "arithmetic"])
    assert [b.title for b in briefs] == ["Which day has the largest spike in level", "Count of high readings"]


def test_scripted_planner_rejects_copies_of_its_example() -> None:
    copied = {"title": "Highest level of a record", "category": "arithmetic", "kind": "mc",
              "question": "What was the highest level in record <record>?", "answer_from": "max of level",
              "columns": ["level"]}
    handle = scripted([json.dumps([copied, brief("Own idea")]), json.dumps([brief("Another idea")])])
    briefs, info = asyncio.run(plan_briefs(handle, profile=PROFILE, task="levels", n=2, retry=FAST))
    assert [b.title for b in briefs] == ["Own idea", "Another idea"] and info.from_planner == 2
    assert "repeated another one or the example" in " ".join(info.errors)
