"""Benchmark: what an `itemsmith author` run's report says about its student ladder and its time,
per category: each candidate's students' accuracy per capability rank (with the series and blind),
whether the ladder orders them (accuracy rising with rank), the capability outcome, and the wall
seconds each verification stage took (with the students' answers counted, so a student answer's
cost can be read off). The totals give the ladder's separation over the run's candidates
(`verification.capability.ladder_auc`, what `itemsmith judges validate-ladder` records) and, when
the run skipped an advisory ladder, the student stage's reason.

Reads OUT/RUN_ID/report.json only (nothing is run again). Prints one JSON line per candidate that
reached the students, then a line of totals per category and stage.

    python benchmarks/author_ladder.py /tmp/author-run/weather/weather6
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from itemsmith.verification.capability import ladder_auc
from itemsmith.verification.students import StudentReport


def _category(slot: dict[str, Any]) -> str:
    kind = slot.get("kind") or {}
    return str(kind.get("category") or slot["brief"]["category"])


def _accuracy(responses: list[dict[str, Any]], blind: bool) -> dict[int, float]:
    by_rank: dict[int, list[bool]] = {}
    for response in responses:
        if response["blind"] == blind:
            by_rank.setdefault(int(response["rank"]), []).append(bool(response["correct"]))
    return {rank: round(sum(flags) / len(flags), 2) for rank, flags in sorted(by_rank.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="an author run's folder (OUT/RUN_ID: report.json)")
    args = parser.parse_args()
    report = json.loads((args.run / "report.json").read_text())
    stage_s: dict[str, float] = {}
    answers = 0
    answered: list[StudentReport] = []
    per_category: dict[str, dict[str, Any]] = {}
    for slot in report["slots"]:
        category = _category(slot)
        totals = per_category.setdefault(category, {"slots": 0, "accepted": 0, "candidates": 0, "ordered": 0})
        totals["slots"] += 1
        totals["accepted"] += slot["status"] == "accepted"
        for attempt in slot["attempts"]:
            for result in attempt.get("verification") or []:
                stage = result["decision"]["stage"]
                stage_s[stage] = round(stage_s.get(stage, 0.0) + result["elapsed_s"], 1)
                students = result.get("students")
                if stage != "students" or not students:
                    continue
                answers += len(students["responses"])
                answered.append(StudentReport.model_validate(students))
                seen = _accuracy(students["responses"], blind=False)
                ordered = all(a < b for a, b in zip(list(seen.values()), list(seen.values())[1:]))
                totals["candidates"] += 1
                totals["ordered"] += ordered
                capability = result.get("capability") or {}
                print(json.dumps({"slot": slot["slot"], "round": attempt.get("round"), "category": category,
                                  "accepted": result["decision"]["accepted"], "items": students["n_items"],
                                  "accuracy_by_rank": seen, "blind_by_rank": _accuracy(students["responses"], True),
                                  "ladder_ordered": ordered, "outcome": capability.get("outcome")}))
    auc, pairs = ladder_auc(answered)
    skipped = [stage["reason"] for stage in report.get("stages", []) if stage["name"] == "students"
               and stage["status"] == "off"]
    print(json.dumps({"wall_s": report.get("wall_s"), "stage_s": stage_s, "student_answers": answers,
                      "ladder_auc": None if auc is None else round(auc, 3), "ladder_pairs": pairs,
                      "students_off": skipped[0] if skipped else None,
                      "s_per_student_answer": round(stage_s.get("students", 0.0) / answers, 2) if answers else None,
                      "categories": per_category}))


if __name__ == "__main__":
    main()
