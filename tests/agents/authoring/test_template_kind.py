"""What an accepted template asks, read from its code, and how the run report and the template file
say it: a counting template in an anomaly slot is arithmetic and its slot not filled; the prompt's
skeleton with only its block call filled in is flagged as such, an edited one is not."""

from __future__ import annotations

from itemsmith.agents.authoring.models import Brief, PlanInfo, RunReport, SlotResult
from itemsmith.agents.authoring.prompts import skeleton
from itemsmith.agents.authoring.run import slot_result, write_outputs
from itemsmith.agents.authoring.template_kind import called_blocks, is_skeleton, template_kind

COUNTING = skeleton(block="count_beyond(win, above=t)", channel="temp_max")
TREND = skeleton(block="trend(win)", channel="temp_max")
EDITED = TREND.replace("        items.append(item)\n",
                       "        if 'strongly' in item['options'][item['answer_index']]:\n"
                       "            items.append(item)\n")


def test_the_blocks_a_template_calls_give_its_category_and_concept() -> None:
    assert called_blocks(COUNTING) == ["count_beyond"]  # take_window, draw_threshold and ask compute no answer
    assert template_kind(COUNTING).category == "arithmetic"
    kind = template_kind(TREND)
    assert (kind.category, kind.concept, kind.blocks) == ("pattern_recognition", "trend", ["trend"])
    both = TREND.replace("res = trend(win)", "res = trend(win) or channel_stat(win, 'mean')")
    assert template_kind(both).category == "pattern_recognition"  # the reasoning block decides
    assert template_kind("def question(n):\n    return []\n").category is None  # free code: no claim


def test_a_skeleton_with_only_its_block_and_channel_filled_in_is_flagged_and_an_edited_one_is_not() -> None:
    assert is_skeleton(TREND) and is_skeleton(COUNTING)
    assert is_skeleton(skeleton(block='unusual(win, 3)', channel="wind").replace("items = []", "items = []  # mine"))
    assert not is_skeleton(EDITED)
    assert not is_skeleton("def question(n):\n    return []\n")


def _slot(number: int, category: str, source: str) -> SlotResult:
    brief = Brief(title=f"Slot {number}", category=category, concept="anomaly", question="What is it?",
                  answer_from="a block")
    return slot_result({"slot": number, "status": "accepted", "source": source, "attempts": []}, brief,
                       run_id="run", handler="weather", generator="scripted")


def test_the_report_lists_each_accepted_templates_category_and_the_slots_not_filled(tmp_path) -> None:
    slots = [_slot(0, "anomaly_detection", COUNTING), _slot(1, "pattern_recognition", EDITED),
             SlotResult(slot=2, brief=Brief(title="Lost", category="causality", question="Who leads?",
                                            answer_from="leads"), status="failed")]
    report = RunReport(run_id="run", handler="weather", task="t", generator="g", planner="p", max_rounds=1,
                       slots=slots, plan=PlanInfo(requested=3, from_planner=3, fallback=0),
                       started_at="2026-01-01T00:00:00Z")
    summary = report.summary()
    listed = {t["slot"]: t for t in summary["templates"]}
    assert listed[0]["category"] == "arithmetic" and listed[0]["asked"] == "anomaly_detection"
    assert listed[0]["filled"] is False and listed[0]["skeleton_unchanged"] is True
    assert listed[1]["category"] == "pattern_recognition" and listed[1]["concept"] == "trend"
    assert listed[1]["filled"] is True and listed[1]["skeleton_unchanged"] is False
    assert [(n["slot"], n["got"]) for n in summary["not_filled"]] == [(0, "arithmetic"), (2, None)]
    assert summary["skeleton_unchanged"] == 1
    assert slots[0].template is not None and slots[0].template.category == "arithmetic"
    write_outputs(report, tmp_path)
    files = sorted((tmp_path / "templates").iterdir())
    header = files[0].read_text().split('"""')[1]
    assert "Category: arithmetic. Concept: arithmetic." in header and "asked for anomaly_detection" in header
    assert "skeleton with nothing changed" in header
    trend_header = files[1].read_text().split('"""')[1]
    assert "Category: pattern_recognition. Concept: trend." in trend_header and "not filled" not in trend_header
