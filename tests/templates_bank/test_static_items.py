"""Importing an existing benchmark (TimeSeriesExam format, JSON lines, a local HF dataset) as static
item groups: stored with provenance and verdicts, idempotent, bad rows refused with nothing stored,
released, exported, evaluated (fresh seeds refused) and re-verified like generated templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from itemsmith.agents.llm.providers.scripted import ScriptedChatModel
from itemsmith.cli.app import app
from itemsmith.items.plotting import plot_item
from itemsmith.items.rendering import TextFormat, render_item
from itemsmith.items.schema import Item
from itemsmith.items.static import parse_static_source
from itemsmith.templates_bank.evaluation import evaluate_release, release_items
from itemsmith.templates_bank.exporters import ExportOptions, export_release
from itemsmith.templates_bank.releases import ReleaseCreate, ReleaseError, create_release
from itemsmith.templates_bank.reverification import reverify_release
from itemsmith.templates_bank.static_items import ItemImportError, import_items, parse_mapping
from itemsmith.templates_bank.storage import (
    BankRow,
    TemplateVersionRow,
    VerdictRow,
    get_bank,
    list_verdicts,
    list_versions,
    open_session,
)
from itemsmith.verification.judges import CRITERIA, Judge, JudgeConfig
from itemsmith.verification.students import Student, StudentConfig


def tse_row(tid: int, i: int, rng: np.random.Generator, *, category: str = "Pattern Recognition") -> dict[str, Any]:
    """A row as TimeSeriesExam's qa_dataset.json has it (options as text, or bare floats for tid 3)."""
    values = [round(float(v), 3) for v in rng.normal(0, 1, 16).cumsum()]
    if tid == 3:  # numeric options, two series
        options = [round(float(v), 2) for v in rng.choice(np.arange(1, 50), 4, replace=False) / 10]
        return {"question": f"What is the lag between the two series? (case {i})", "options": options,
                "answer": options[i % 4], "question_type": "multiple-choice", "ts1": values,
                "ts2": values[2:] + values[:2], "tid": tid, "category": "Causality Analysis",
                "subcategory": "Granger causality", "difficulty": "hard", "relevant_concepts": ["lag"]}
    if tid == 2:
        options = ["Yes", "No"]
        return {"question": f"Is there an anomaly in the series? (case {i})", "options": options,
                "answer": options[i % 2], "question_type": "binary", "ts": values, "tid": tid,
                "category": "Anomaly Detection", "subcategory": "point anomaly", "difficulty": "easy",
                "relevant_concepts": ["anomaly"]}
    options = ["upward trend", "downward trend", "no trend", "a cycle"]
    return {"question": f"Which pattern does the series show? (case {i})", "options": options,
            "answer": options[i % 4], "question_type": "multiple_choice", "ts": values, "tid": tid,
            "category": category, "subcategory": "trend", "difficulty": "medium", "relevant_concepts": ["trend"]}


def write_tse(path: Path, per_template: int = 8) -> Path:
    rng = np.random.default_rng(0)
    rows = [tse_row(tid, i, rng) for tid in (1, 2, 3) for i in range(per_template)]
    path.write_text(json.dumps(rows))
    return path


def counts(url: str) -> tuple[int, int, int]:
    with open_session(url) as session:
        return tuple(session.scalar(select(func.count()).select_from(t)) or 0  # type: ignore[return-value]
                     for t in (BankRow, TemplateVersionRow, VerdictRow))


def test_tse_file_imports_as_static_groups_with_provenance_verdicts_and_idempotently(bank_url: str,
                                                                                     tmp_path: Path) -> None:
    source = write_tse(tmp_path / "qa_dataset.json")
    with open_session(bank_url) as session:
        report, audit = import_items(session, "tse", str(source), "tse", owner="tests", created_by="tests")
    assert (report.rows, report.groups, report.new_versions, report.unchanged_versions) == (24, 3, 3, 0)
    with open_session(bank_url) as session:
        bank = get_bank(session, "tse")
        versions = list_versions(session, bank.id)
        assert bank.handler == "static:tse"
        assert [v.template_key for v in versions] == ["tse-pattern-recognition-1", "tse-anomaly-detection-2", "tse-causality-analysis-3"]
        assert {v.kind for v in versions} == {"static"}
        lag = versions[2]
        assert lag.category == "Causality Analysis" and lag.difficulty == "hard" and lag.concepts == ["lag"]
        assert lag.provenance.origin == "imported" and lag.provenance.source_format == "tse"
        assert lag.provenance.source_sha256 == report.sha256 and lag.provenance.source_file == "qa_dataset.json"
        items = parse_static_source(lag.source)
        assert [s.name for s in items[0].series] == ["series 1", "series 2"]
        assert items[0].series[0].timestamps is None and items[0].series[0].unit is None
        raw = json.loads(source.read_text())[16]
        assert items[0].answer == json.dumps(raw["answer"]) and items[0].metadata["source_row"] == 17
        binary = parse_static_source(versions[1].source)
        assert binary[0].kind.value == "tf"
        assert [v.stage for v in list_verdicts(session, lag.id)] == ["structure", "audit", "decision"]
        structure = list_verdicts(session, lag.id, "structure")[0].record
        assert structure.passed and structure.num_samples == 8 and structure.items == items[:5]
    before = counts(bank_url)
    with open_session(bank_url) as session:
        again, _ = import_items(session, "tse", str(source), "tse", owner="tests", created_by="tests")
    assert (again.new_versions, again.unchanged_versions) == (0, 3)
    assert counts(bank_url) == before
    assert [g.report.n_items for g in audit.groups] == [8, 8, 8]


@pytest.mark.parametrize(("bad", "message", "column"), [
    ({"answer": "sideways"}, "row 2 (answer): the answer 'sideways' is not one of its options", "answer"),
    ({"ts": None}, "row 2 (ts): no series", "ts"),
    ({"ts": [1.0, "n/a", 2.0]}, "row 2 (ts): series 'ts' holds a non-number at position 1 ('n/a'): mixed types", "ts"),
    ({"options": ["up", {"x": 1}, "flat", "cycle"]}, "row 2 (options): option 1 is {'x': 1}: an option is text or a number",
     "options"),
    ({"question_type": "open"}, "row 2 (question_type): question_type 'open'", "question_type"),
    ({"subcategory": "tr\x00end"}, "row 2 (subcategory): text must not contain NUL", "subcategory"),
])
def test_bad_row_is_reported_by_number_and_nothing_is_stored(bank_url: str, tmp_path: Path, bad: dict[str, Any],
                                                             message: str, column: str) -> None:
    rng = np.random.default_rng(1)
    rows = [tse_row(1, i, rng) for i in range(4)]
    rows[1].update(bad)
    source = tmp_path / "bad.json"
    source.write_text(json.dumps(rows))
    with open_session(bank_url) as session, pytest.raises(ItemImportError) as caught:
        import_items(session, "bad", str(source), "tse", owner="tests", created_by="tests")
    assert message in str(caught.value) and "nothing imported" in str(caught.value)
    assert [(p.row, p.field) for p in caught.value.problems] == [(2, column)]
    assert counts(bank_url) == (0, 0, 0)


def test_every_bad_row_is_listed(tmp_path: Path, bank_url: str) -> None:
    rng = np.random.default_rng(2)
    rows = [tse_row(1, i, rng) for i in range(5)]
    rows[0]["answer"] = "nope"
    rows[3].pop("ts")
    source = tmp_path / "bad.json"
    source.write_text(json.dumps(rows))
    with open_session(bank_url) as session, pytest.raises(ItemImportError) as caught:
        import_items(session, "bad", str(source), "tse", owner="tests", created_by="tests")
    assert [(p.row, p.field) for p in caught.value.problems] == [(1, "answer"), (4, "ts")]


def test_jsonl_with_a_column_mapping_and_a_local_hf_dataset(bank_url: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = [{"prompt": f"Which is the maximum? ({i})", "choices": ["1", "2", "3", "4"], "label": i % 4,
             "a": list(rng.normal(size=10)), "b": list(rng.normal(size=10)), "tpl": f"g{i % 2}", "task": "stats"}
            for i in range(6)]
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows))
    mapping = parse_mapping("question=prompt,options=choices,answer_index=label,series=a+b,group=tpl,category=task")
    with open_session(bank_url) as session:
        report, _ = import_items(session, "mapped", str(source), "jsonl", mapping=mapping, owner="tests",
                                 created_by="tests")
        versions = list_versions(session, get_bank(session, "mapped").id)
    assert (report.rows, report.groups) == (6, 2)
    item = parse_static_source(versions[0].source)[1]
    assert item.question == "Which is the maximum? (2)" and item.answer_index == 2
    assert [s.name for s in item.series] == ["a", "b"] and versions[0].category == "stats"

    datasets = pytest.importorskip("datasets")
    saved = tmp_path / "saved"
    datasets.Dataset.from_list(rows).save_to_disk(str(saved))
    parquet = tmp_path / "rows.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(parquet))
    with open_session(bank_url) as session:
        from_disk, _ = import_items(session, "hf", str(saved), "hf", mapping=mapping, owner="tests",
                                    created_by="tests")
        from_parquet, _ = import_items(session, "hf", f"{parquet}:train", "hf", mapping=mapping, owner="tests",
                                       created_by="tests")
    assert (from_disk.new_versions, from_parquet.new_versions, from_parquet.unchanged_versions) == (2, 0, 2)
    with pytest.raises(ValueError, match="the fields are"):
        parse_mapping("prompt=question")


def static_release(url: str, tmp_path: Path):
    source = write_tse(tmp_path / "qa_dataset.json")
    with open_session(url) as session:
        import_items(session, "tse", str(source), "tse", owner="tests", created_by="tests")
        return create_release(session, ReleaseCreate(bank="tse", seeds=[0, 1, 2], num_samples=5, created_by="tests"))


def test_static_release_exports_evaluates_and_refuses_fresh_seeds(bank_url: str, tmp_path: Path) -> None:
    release = static_release(bank_url, tmp_path)
    manifest = release.manifest
    assert manifest.counts.items == 24 and {t.kind for t in manifest.templates} == {"static"}
    assert all(t.seeds == [0] and t.num_samples == 8 for t in manifest.templates)  # seeds and size ignored
    assert manifest.content_checksum() == manifest.checksum
    items = [item for _, run in release.items() for item in run.items]
    assert len(items) == 24 and items[0].question == "Which pattern does the series show? (case 0)"

    out = tmp_path / "export"
    report = export_release(release, "jsonl", out, ExportOptions(plots=True))
    assert report.rows == 24
    first = json.loads((out / "data.jsonl").read_text().splitlines()[0])
    assert first["question"] == items[0].question and first["answer_index"] == items[0].answer_index
    assert first["image"] and (out / first["image"]).read_bytes()[:4] == b"\x89PNG"
    card = export_release(release, "hf", tmp_path / "hf", ExportOptions())
    assert card.rows == 24
    assert "all of the groups stored items imported from an existing benchmark" in (tmp_path / "hf" / "README.md").read_text()

    keys = ScriptedChatModel.from_source({"rules": [
        {"match": json.dumps(item.question)[1:-1].replace("(", r"\(").replace(")", r"\)").replace("?", r"\?"),
         "replies": [f"Answer: {item.answer_letter}"]} for item in items], "replies": ["Answer: A"]},
        model_name="keys")
    student = Student(StudentConfig(name="keys", rank=0, model="scripted:keys"), keys)
    result = evaluate_release(release, student)
    assert result.overall.n == 24 and result.overall.accuracy == 1.0

    with pytest.raises(ReleaseError, match="static items imported from an existing benchmark"):
        release_items(release, fresh_seed=7)


def test_scripted_judges_reverify_a_static_release(bank_url: str, tmp_path: Path) -> None:
    release = static_release(bank_url, tmp_path)
    model = ScriptedChatModel.from_source({"replies": ["Fine.\nScore: 8"]}, model_name="judge")
    with open_session(bank_url) as session:
        report = reverify_release(session, release, [Judge(JudgeConfig(name="judge", samples=1), model)])
    assert [t.template_id for t in report.templates] == ["tse-pattern-recognition-1", "tse-anomaly-detection-2", "tse-causality-analysis-3"]
    assert report.judge_calls.fresh == 3 * len(CRITERIA)
    assert all(t.new_decision.accepted for t in report.templates)


def test_series_without_timestamps_or_units_render_in_every_text_format_and_plot(tmp_path: Path) -> None:
    source = write_tse(tmp_path / "qa_dataset.json", per_template=1)
    from itemsmith.templates_bank.static_items.importer import read_groups

    _, groups = read_groups(str(source), "tse", {})
    two_series = groups[2].item_models()[0]
    for fmt in TextFormat:
        text = render_item(two_series, fmt)
        assert "series 1" in text and "series 2" in text and "unit" not in text
    png = plot_item(two_series)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_import_audit_and_fresh_seed_refusal(bank_url: str, tmp_path: Path) -> None:
    source = write_tse(tmp_path / "qa_dataset.json")
    runner = CliRunner()
    first = runner.invoke(app, ["bank", "import-items", "tse", str(source), "--format", "tse", "--db", bank_url])
    assert first.exit_code == 0, first.output
    assert "24 items in 3 groups" in first.output and "3 new versions" in first.output
    again = runner.invoke(app, ["bank", "import-items", "tse", str(source), "--format", "tse", "--db", bank_url])
    assert "0 new versions, 3 unchanged" in again.output
    created = runner.invoke(app, ["release", "create", "tse", "--by", "tests", "--db", bank_url])
    assert created.exit_code == 0, created.output
    audited = runner.invoke(app, ["release", "audit", "tse@1", "--all", "--db", bank_url])
    assert audited.exit_code == 0, audited.output
    assert "== per category" in audited.output and "tse-causality-analysis-3 [Causality Analysis] 8 items" in audited.output
    assert "power" in audited.output
    as_json = json.loads(runner.invoke(app, ["release", "audit", "tse@1", "--json", "--db", bank_url]).output)
    assert len(as_json["groups"]) == 3 and as_json["overall"]["items"] == 24
    script = tmp_path / "replies.json"
    script.write_text("[]")
    refused = runner.invoke(app, ["release", "evaluate", "tse@1", "--model", f"scripted:{script}", "--fresh-seed",
                                  "--db", bank_url])
    assert refused.exit_code == 1 and "no fresh instances" in refused.output
    bad = runner.invoke(app, ["bank", "import-items", "tse", str(source), "--format", "csv", "--db", bank_url])
    assert bad.exit_code == 2


def test_scripted_models_of_known_strength_calibrate_a_static_release(bank_url: str, tmp_path: Path) -> None:
    import re

    from itemsmith.templates_bank.calibration import CalibrationOptions, calibrate_release
    from itemsmith.templates_bank.evaluation import EvaluationStore, evaluate

    release = static_release(bank_url, tmp_path)
    items = release_items(release)
    flat = [item for run in items.runs for item in run.items]
    for strength in range(6):  # model k is right on k of every 6 items (a different k for each)
        def letter(j: int, item: Item, strength: int = strength) -> str:
            right = (7 * j + 3 * strength) % 6 < strength
            return chr(65 + (item.answer_index if right else (item.answer_index + 1) % len(item.options)))

        rules = [{"match": re.escape(render_item(item, TextFormat.plain)), "replies": [f"Answer: {letter(j, item)}"]}
                 for j, item in enumerate(flat)]
        model = ScriptedChatModel.from_source({"rules": rules, "replies": ["no idea"]}, model_name=f"m{strength}")
        student = Student(StudentConfig(name=f"m{strength}", rank=0, model=f"scripted:m{strength}"), model)
        with open_session(bank_url) as session:
            evaluate(items, student, store=EvaluationStore.open(session, release, f"eval-{strength}"))
    with open_session(bank_url) as session:
        report = calibrate_release(session, release, CalibrationOptions(min_respondents=5))
        bank_id = get_bank(session, "tse").id
        irt = [list_verdicts(session, v.id, "irt") for v in list_versions(session, bank_id)]
    abilities = {r.respondent: r.ability for r in report.respondents}
    ordered = [abilities[f"m{k}"] for k in range(6)]  # stored under the student's name
    assert ordered == sorted(ordered) and ordered[0] < ordered[-1]
    assert [t.template_id for t in report.templates] == ["tse-pattern-recognition-1", "tse-anomaly-detection-2", "tse-causality-analysis-3"]
    assert all(len(v) == 1 for v in irt)


def test_release_audit_of_generated_templates_audits_the_items_the_release_holds(curated_release) -> None:
    from itemsmith.templates_bank.static_items import audit_release, audit_table

    report = audit_release(curated_release.release)
    assert [g.group for g in report.groups] == list(curated_release.templates)
    assert {g.report.n_items for g in report.groups} == {len(curated_release.seeds) * curated_release.samples}
    assert report.overall.items == len(curated_release.templates) * 12
    text = audit_table(report, all_groups=True)
    assert "== overall" in text and "exam_trend_direction [" in text


def test_items_are_not_imported_into_a_bank_of_generated_templates(bank_url: str, tmp_path: Path) -> None:
    from itemsmith.templates_bank.storage import BankCreate, create_bank

    with open_session(bank_url) as session:
        create_bank(session, BankCreate(name="made", handler="synthetic", owner="tests"))
    with open_session(bank_url) as session, pytest.raises(ItemImportError, match="holds generated templates"):
        import_items(session, "made", str(write_tse(tmp_path / "qa.json")), "tse", owner="tests", created_by="tests")
    assert counts(bank_url)[1:] == (0, 0)
