import json

from typer.testing import CliRunner

from itemsmith.cli.app import app

runner = CliRunner()

OK_TEMPLATE = """
def question(num_samples):
    items = []
    for i in range(num_samples):
        values = rng.normal(size=30).cumsum()
        top = int(np.argmax(values))
        wrong = [int(x) for x in rng.choice([j for j in range(30) if j != top], size=3, replace=False)]
        items.append(mc_item("At which index is the series highest?", top, wrong,
                             series=[series(values, name="x")], rationale=f"argmax is {top}"))
    return items
"""


def test_help_lists_the_commands():
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("sample", "check-template", "handlers", "bank"):
        assert command in result.output


def test_handlers_list_shows_every_builtin():
    result = runner.invoke(app, ["handlers", "list"])
    assert result.exit_code == 0
    for name in ("synthetic", "ecg", "glucose", "stocks", "weather", "italy_power", "basic_motions"):
        assert name in result.output
    assert "unavailable" not in result.output


def test_bank_list_shows_curated_templates():
    result = runner.invoke(app, ["bank", "list"])
    assert result.exit_code == 0
    assert "exam_trend_direction" in result.output and "weather_wettest_month" in result.output


def test_sample_a_curated_template_prints_items_with_answers():
    result = runner.invoke(app, ["sample", "--template", "exam_trend_direction", "-n", "2", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.output.count("--- item") == 2 and result.output.count("Answer: ") == 2
    assert "Date,Value" in result.output


def test_sample_unknown_template_is_a_clear_error():
    result = runner.invoke(app, ["sample", "--template", "exam_trend"])
    assert result.exit_code == 2
    assert "no curated template named 'exam_trend'" in result.output and "exam_trend_direction" in result.output


def test_check_template_json_ok(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text(OK_TEMPLATE)
    result = runner.invoke(app, ["check-template", str(path), "--handler", "synthetic", "--samples", "3", "--json"])
    payload = json.loads(result.output)
    assert result.exit_code == 0
    assert payload["status"] == "ok" and len(payload["items"]) == 3 and payload["error"] is None
    assert set(payload) == {"status", "items", "error", "elapsed_ms"}


def test_check_template_json_statuses_and_exit_codes(tmp_path):
    cases = {
        "refused": "import os\ndef question(n):\n    return []\n",
        "error": "def question(n):\n    return [1 / 0]\n",
        "killed": "def question(n):\n    while True:\n        pass\n",
        "rejected": "def question(n):\n    return [{'question': 'q', 'options': ['a'], 'answer_index': 0}] * n\n",
    }
    for status, source in cases.items():
        path = tmp_path / f"{status}.py"
        path.write_text(source)
        result = runner.invoke(app, ["check-template", str(path), "--handler", "synthetic", "--json", "--wall-s", "2"])
        payload = json.loads(result.output)
        assert payload["status"] == status, (status, payload)
        assert payload["error"]
        assert result.exit_code == 1


def test_bank_sample_writes_jsonl_with_template_tags(tmp_path):
    out = tmp_path / "items.jsonl"
    result = runner.invoke(app, ["bank", "sample", "-t", "exam_trend_direction", "-t", "weather_wettest_month",
                                 "-n", "2", "--seed", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4
    assert {r["template_id"] for r in rows} == {"exam_trend_direction", "weather_wettest_month"}
    assert all(r["category"] and r["concepts"] and r["options"] for r in rows)


def test_bank_sample_needs_all_or_templates(tmp_path):
    result = runner.invoke(app, ["bank", "sample", "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "either --all or" in result.output
