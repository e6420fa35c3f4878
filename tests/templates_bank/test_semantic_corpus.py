"""The semantic corpus (benchmarks/semantic_corpus) and its runner (benchmarks/semantic_verification.py).

Cheap checks only: the manifest lists every file and nothing else, every template parses and defines
`question(num_samples)`, classes and counts are as the corpus promises, the blind rules answer what they
claim and abstain otherwise, the runner reads `itemsmith verify`'s contract (checked against a
scripted stand-in for the command, since the real one is not part of this branch). Two templates run
in the sandbox: a gaming one its rule always answers, and a good one the same rule cannot.
The whole corpus runs by hand: `python benchmarks/semantic_verification.py --check-corpus`.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import textwrap
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER_PATH = ROOT / "benchmarks" / "semantic_verification.py"


def load_runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("semantic_verification", RUNNER_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations through sys.modules
    spec.loader.exec_module(module)
    return module


runner = load_runner()
ENTRIES = runner.load_manifest()


def mc(question: str, options: list[str], answer: int, context: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": "mc", "question": question, "options": options, "answer_index": answer}
    if context is not None:
        item["context"] = context
    return item


def tf(statement: str, truth: bool) -> dict[str, Any]:
    return {"kind": "tf", "question": statement, "options": ["True", "False"], "answer_index": 0 if truth else 1}


# --- the corpus ------------------------------------------------------------------------------------


def test_manifest_lists_every_template_file_once() -> None:
    folders = {f"{kind}{suffix}" for kind in ("good", "flawed", "gaming") for suffix in ("", "_users")}
    on_disk = {p.relative_to(runner.CORPUS).as_posix() for p in runner.CORPUS.rglob("*.py")
               if p.relative_to(runner.CORPUS).parts[0] in folders}
    assert on_disk == {e.file for e in ENTRIES}
    assert all(e.file.split("/")[0] in (e.kind, f"{e.kind}_users") for e in ENTRIES)
    assert all((runner.CORPUS / e.base).is_file() for e in ENTRIES if e.base)  # an edit names its correct template


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.file)
def test_template_parses_and_defines_question(entry: Any) -> None:
    tree = ast.parse(entry.path.read_text())
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "question" in functions
    assert [a.arg for a in functions["question"].args.args] == ["num_samples"]
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.fix], ids=lambda e: e.file)
def test_fix_applies_once_and_leaves_a_template(entry: Any) -> None:
    fixed = entry.fixed_source()
    assert fixed != entry.path.read_text()
    tree = ast.parse(fixed)
    assert any(isinstance(n, ast.FunctionDef) and n.name == "question" for n in tree.body)


def test_counts_and_classes_are_as_documented() -> None:
    kinds = Counter(e.kind for e in ENTRIES)
    assert kinds["good"] >= 10 and kinds["flawed"] >= 30
    classes = Counter(e.klass for e in ENTRIES)
    assert all(classes[c] >= 3 for c in runner.FLAW_CLASSES), classes
    assert all(classes[c] >= 2 for c in runner.GAMING_CLASSES), classes
    assert {e.handler for e in ENTRIES if e.kind == "good"} >= {"weather", "stocks", "glucose", "ecg", "synthetic"}


def test_manifest_entries_are_validated() -> None:
    good = {"file": "good/x.py", "kind": "good", "class": "good", "handler": "weather", "flaw": "none"}
    runner.CorpusEntry.model_validate(good)
    bad_entries = [
        {**good, "kind": "flawed", "class": "off_by_one", "flaw": "something"},  # not a flaw class
        {**good, "flaw": "the key is wrong"},  # a good template with a flaw
        {**good, "kind": "flawed", "class": "precedence", "flaw": "none"},  # a flawed one without
        {**good, "kind": "gaming", "class": "middle_value", "flaw": "x", "blind_rule": "psychic"},
        {**good, "kind": "flawed", "class": "precedence", "flaw": "x", "blind_rule": "middle_value"},
        {**good, "fix": [["a", "b"]]},  # only flawed templates have a fixed twin
        {**good, "base": "good/y.py"},  # ... and a base they edit
    ]
    for raw in bad_entries:
        with pytest.raises(ValueError):
            runner.CorpusEntry.model_validate(raw)


def test_fix_whose_text_is_not_in_the_template_is_refused() -> None:
    entry = next(e for e in ENTRIES if e.fix)
    broken = entry.model_copy(update={"fix": [("text that is nowhere in the template", "x")]})
    with pytest.raises(ValueError, match="occurs 0 times"):
        broken.fixed_source()


def test_manifest_with_a_missing_file_is_refused(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text('[[template]]\nfile = "good/nowhere.py"\nkind = "good"\nclass = "good"\n'
                        'handler = "weather"\nflaw = "none"\n')
    with pytest.raises(ValueError, match="do not exist"):
        runner.load_manifest(manifest)


# --- blind rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "item", "expected"), [
    ("roundest_number", mc("About how much?", ["47 mm", "40 mm", "43 mm", "49 mm"], 1), 1),
    ("roundest_number", mc("About how much?", ["45 mm", "35 mm", "43 mm", "49 mm"], 1), None),  # two multiples of 5
    ("odd_one_out_parity", mc("How many?", ["14", "15", "18", "20"], 1), 1),
    ("odd_one_out_parity", mc("How many?", ["14", "15", "17", "20"], 1), None),
    ("ratio_hub", mc("Total?", ["40.90 mm", "4.09 mm", "409.00 mm", "1.61 mm"], 0), 0),
    ("ratio_hub", mc("Total?", ["40.9 mm", "37.2 mm", "45.0 mm", "33.3 mm"], 0), None),
    ("weekday_in_question", mc("The warmest day was a Friday. Which date?",
                               ["2013-11-04", "2013-11-01", "2013-11-02", "2013-11-17"], 1), 1),
    ("weekday_in_question", mc("Which date was warmest?", ["2013-11-04", "2013-11-01"], 1), None),
    ("just_under_number", mc("it came out just under 12 °C. What was it?", ["11.6°C", "9.1°C", "13.0°C", "14.2°C"], 0), 0),
    ("just_under_number", mc("it came out a little over 11 °C.", ["11.3°C", "9.1°C", "13.0°C", "14.2°C"], 0), 0),
    ("tf_absolute_words", tf("On every one of these days the minimum was above 4 °C.", False), 1),
    ("tf_absolute_words", tf("On at least one of these days the minimum was above 4 °C.", True), 0),
    ("tf_threshold_decimals", tf("The mean of these daily maxima is above 10.73 °C.", False), 1),
    ("tf_threshold_decimals", tf("The mean of these daily maxima is above 9 °C.", True), 0),
    ("middle_value", mc("Mean?", ["3.7 m/s", "2.6 m/s", "3.2 m/s"], 2), 2),
    ("middle_value", mc("Mean?", ["3.7 m/s", "2.6 m/s", "3.2 m/s", "4.0 m/s"], 2), None),  # even count
    ("option_in_context", mc("Which date?", ["2013-11-08", "2013-11-17"], 1, context="warning for 2013-11-17"), 1),
    ("option_in_context", mc("Which date?", ["2013-11-08", "2013-11-17"], 1, context="no dates here"), None),
])
def test_blind_rule_answers_its_cue_and_abstains_without_it(rule: str, item: dict[str, Any],
                                                            expected: int | None) -> None:
    assert runner.BLIND_RULES[rule]([])(item) == expected


def test_memorize_by_question_remembers_keys_across_seeds_only() -> None:
    seen = mc("Which was the warmest day of May 2014?", ["2014-05-12", "2014-05-03", "2014-05-20"], 0)
    again = mc("Which was the warmest day of May 2014?", ["2014-05-07", "2014-05-12", "2014-05-28"], 1)
    unseen = mc("Which was the warmest day of June 2014?", ["2014-06-07", "2014-06-12"], 0)
    answer = runner.BLIND_RULES["memorize_by_question"]([seen])
    assert answer(again) == 1
    assert answer(unseen) is None


def _of(item: dict[str, Any], *records: str) -> dict[str, Any]:
    return {**item, "metadata": {"record_ids": list(records)}}


def test_key_prior_answers_from_other_records_keys_never_the_items_own() -> None:
    months = ["March", "July", "May", "October"]
    train = [_of(mc("Warmest month of 1950?", months, 1), "1950") for _ in range(3)]  # July, three times
    train += [_of(mc(f"Warmest month of {y}?", months, 0), y) for y in ("1951", "1952")]  # March
    answer = runner.BLIND_RULES["key_prior"](train)
    assert answer(_of(mc("Warmest month of 1960?", ["May", "July", "June", "March"], 0), "1960")) == 1
    # asked about 1950 again, its own three Julys do not count: March, from the other years
    assert answer(_of(mc("Warmest month of 1950?", ["July", "March", "June", "May"], 0), "1950")) == 1
    assert answer(mc("Warmest month?", months, 0)) is None  # names no record
    claims = [_of(tf(f"In {y} summer carried more than 27% of passengers.", True), y) for y in ("1950", "1951")]
    assert runner.BLIND_RULES["key_prior"](claims)(
        _of(tf("In 1955 summer carried more than 27% of passengers.", False), "1955")) == 0


def test_score_rule_counts_abstentions_as_a_guess() -> None:
    items = [mc("Mean?", ["1.0", "2.0", "3.0"], 1), mc("Mean?", ["1.0", "2.0", "3.0"], 0),
             mc("Mean?", ["1.0", "2.0", "3.0", "4.0"], 0)]
    score = runner.score_rule("middle_value", [], items)
    assert (score.answered, score.correct) == (2, 1)
    assert score.expected_accuracy == pytest.approx((1 + 0.25) / 3)
    assert score.chance == pytest.approx((1 / 3 + 1 / 3 + 1 / 4) / 3)


# --- the verify contract, against a scripted stand-in for `itemsmith verify` -------------------------


def scripted_verify(tmp_path: Path, body: str) -> list[str]:
    script = tmp_path / "fake_itemsmith.py"
    script.write_text(textwrap.dedent(body))
    return [sys.executable, str(script)]


def test_verify_outcome_from_scripted_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command = scripted_verify(tmp_path, """
        import json, sys
        args = sys.argv[1:]
        assert args[0] == "verify" and "--json" in args and "--no-judges" in args and "--no-students" in args
        print("progress line")
        print(json.dumps({"accepted": False, "stage": "fidelity", "reasons": ["series x is no column"],
                          "stages": [{"stage": "structure", "passed": True}, {"stage": "fidelity", "passed": False}]}))
        sys.exit(1)
    """)
    monkeypatch.setattr(runner, "itemsmith_command", lambda: command)
    outcome = runner.verify_entry(ENTRIES[0], with_models=False, timeout=60)
    assert (outcome.accepted, outcome.stage, outcome.error) == (False, "fidelity", None)
    assert outcome.stages == {"structure": "passed", "fidelity": "failed"}


def test_verify_verdict_disagreeing_with_exit_code_is_an_error(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    command = scripted_verify(tmp_path, """
        import json, sys
        print(json.dumps({"accepted": True, "stage": None, "reasons": [], "stages": {"structure": "passed"}}))
        sys.exit(1)
    """)
    monkeypatch.setattr(runner, "itemsmith_command", lambda: command)
    outcome = runner.verify_entry(ENTRIES[0], with_models=True, timeout=60)
    assert outcome.accepted is None and "exit code 1" in (outcome.error or "")


def test_missing_verify_command_fails_with_a_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    command = scripted_verify(tmp_path, """
        import sys
        print("Error: No such command 'verify'.", file=sys.stderr)
        sys.exit(2)
    """)
    monkeypatch.setattr(runner, "itemsmith_command", lambda: command)
    with pytest.raises(SystemExit, match="itemsmith verify` is not available.*No such command"):
        runner.require_verify_command()


def test_summary_gives_recall_per_class_and_false_rejections_for_good() -> None:
    outcome = runner.VerifyOutcome
    table = runner.summarize_verify([
        outcome(file="flawed/a.py", kind="flawed", klass="precedence", accepted=False, stage="audit", wall_s=1),
        outcome(file="flawed/b.py", kind="flawed", klass="precedence", accepted=True, wall_s=1),
        outcome(file="flawed/c.py", kind="flawed", klass="precedence", accepted=None, error="timed out", wall_s=1),
        outcome(file="good/d.py", kind="good", klass="good", accepted=False, stage="fidelity", wall_s=1),
        outcome(file="good/e.py", kind="good", klass="good", accepted=True, wall_s=1),
    ])
    assert table["precedence"]["rate"] == 0.5 and table["precedence"]["errors"] == 1
    assert table["precedence"]["missed"] == ["flawed/b.py"]
    assert table["good"]["rejected_by_stage"] == {"fidelity": 1} and table["good"]["rate"] == 0.5


# --- two templates in the sandbox ------------------------------------------------------------------


def test_gaming_template_is_answered_blind_and_a_good_one_is_not() -> None:
    pytest.importorskip("vega_datasets", reason="the weather handler needs the 'examples' extra")
    from itemsmith.sandbox import run_template

    by_file = {e.file: e for e in ENTRIES}
    gaming = by_file["gaming/weather_total_precip_about.py"]
    good = by_file["good/weather_total_precip.py"]
    runs = {e.file: run_template(e.path.read_text(), e.handler, num_samples=12, seed=5) for e in (gaming, good)}
    assert all(r.status.value == "ok" and len(r.items) == 12 for r in runs.values())
    played = runner.score_rule(gaming.blind_rule, [], runs[gaming.file].items)
    control = runner.score_rule(gaming.blind_rule, [], runs[good.file].items)
    assert played.correct == played.items == 12
    assert control.expected_accuracy < 0.6
